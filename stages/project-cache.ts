/**
 * What a command learned about a project's files, kept in Forge's
 * machine-wide cache (FORGE_CACHE_DIR) as Go's build cache keeps compiled
 * packages, so a later command in the same project (a build after an edit,
 * a build with .forge/ removed, `forge tool run`) does the work only for
 * files that changed. Two kinds use it: parsed docstrings
 * (parse-docstrings.ts) and the Python source check
 * (python/python-check-cache.ts).
 *
 * Entries are filed under what they were made from (a file's sha256, with
 * whatever else the kind needs in its key) and under their maker: the
 * compiled CLI's build (its version, size, mtime and inode, as they name
 * its code cache, runtime/code-cache.ts), and for the Python check the
 * interpreter too. A rebuilt or upgraded Forge never takes another build's
 * entries. Run from source (tests that call the stages directly), there is
 * no compiled CLI and nothing is cached.
 *
 * One file per kind and project, read once and written at most once per
 * command (when an entry was added, or one went unused; a kind read in part
 * reads it again first, to keep what others wrote meanwhile), through a temp file and
 * a rename; touched when used (at most once a day), and removed when no
 * command used it for 30 days, as the build's other cache entries are. A
 * cache that cannot be read or written costs the work, never the command.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { markUsed, removeUnused, writeFileAtomically } from './blob-cache.ts';
import { defaultCacheDir, forgeVersion } from './forge-paths.ts';
import { ownValue } from '../runtime/own-value.ts';
import { fileIdentity } from '../runtime/file-identity.ts';

/** Bump when what an entry means changes while the CLI's file stays the same (it never does: a rebuild changes it). */
const FORMAT = 2;

export interface ProjectCache<Entry> {
  /** The entry kept under `key`, if this maker made one. */
  get(key: string): Entry | undefined;
  /** Keeps `entry` under `key`: copied now, as later stages may change the objects given. */
  set(key: string, entry: Entry): void;
  /** Writes the file if an entry was added, or (for a kind that keeps only what was used) one went unused. */
  save(): void;
}

export interface ProjectCacheOptions {
  cacheDir?: string;
  /**
   * Which entries a save keeps. `used` (the default): those this command got
   * or set, for kinds every command reads whole (each command parses every
   * docstring). `{ last: N }`: every entry, for kinds a command reads in
   * part (`forge tool run` checks one tool's Python files); past N, those
   * this command did not use go first, least recently written first (a hit
   * alone writes nothing, so it does not count as a use).
   */
  keep?: 'used' | { last: number };
}

interface CacheFile {
  format: number;
  maker: string;
  /** Keys are never integer-like: a JSON object keeps the order other keys were added in, and `keep: { last }` relies on it. */
  entries: Record<string, unknown>;
}

/** The `kind` cache (a folder name) of the project at `root`, or undefined without a maker (not the compiled CLI). */
export function openProjectCache<Entry>(kind: string, root: string, maker: string | undefined, { cacheDir = defaultCacheDir(), keep = 'used' }: ProjectCacheOptions = {}): ProjectCache<Entry> | undefined {
  if (maker === undefined) return undefined;
  const file = join(cacheDir, kind, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`);
  const stored = readStored(file, maker);
  const used: Record<string, unknown> = {};
  let changed = false;
  if (Object.keys(stored).length) markUsed(file);
  return {
    get(key) {
      const entry = ownValue(stored, key);
      if (entry !== undefined) used[key] = entry;
      return entry as Entry | undefined;
    },
    set(key, entry) {
      used[key] = JSON.parse(JSON.stringify(entry));
      changed = true;
    },
    save() {
      const dropsUnused = keep === 'used' && Object.keys(used).length !== Object.keys(stored).length;
      if (!changed && !dropsUnused) return;
      let entries = used;
      if (keep !== 'used') {
        // What others wrote since this command read the file (another command, the build's other check) is kept too.
        const others = { ...stored, ...readStored(file, maker) };
        // Those used now last, and every one of them kept; the unused ones fill the rest, the most recently written.
        const unused = Object.keys(others).filter((key) => !Object.hasOwn(used, key));
        const room = Math.max(0, keep.last - Object.keys(used).length);
        const order = [...unused.slice(unused.length - room), ...Object.keys(used)];
        entries = Object.fromEntries(order.map((key) => [key, Object.hasOwn(used, key) ? used[key] : others[key]]));
      }
      try {
        writeFileAtomically(file, JSON.stringify({ format: FORMAT, maker, entries } satisfies CacheFile));
        // Projects gone (or moved) leave their files: those no command used for 30 days go, and so do temp files a killed writer left.
        removeUnused(dirname(file), '.json');
        removeUnused(dirname(file), '.tmp');
      } catch {
        // A cache that cannot be written only costs the next command its work.
      }
    },
  };
}

function readStored(file: string, maker: string): Record<string, unknown> {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as CacheFile;
    if (stored.format === FORMAT && stored.maker === maker && stored.entries && typeof stored.entries === 'object') return stored.entries;
  } catch {
    // None yet, or not one this module wrote whole.
  }
  return {};
}

/** The compiled CLI's build (dist/forge-cli.cjs), when this code runs from it; undefined from source. */
export function compiledCliBuild(): string | undefined {
  if (typeof __filename !== 'string' || !__filename.endsWith('forge-cli.cjs')) return undefined;
  try {
    const stat = statSync(__filename, { bigint: true });
    return `${forgeVersion()}-${fileIdentity(stat)}`;
  } catch {
    return undefined;
  }
}
