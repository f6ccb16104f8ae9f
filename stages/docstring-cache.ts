/**
 * The parsed docstrings of a project's tool files, kept in Forge's
 * machine-wide cache (FORGE_CACHE_DIR) as Go's build cache keeps compiled
 * packages: what parsing a file gave (its ToolSpec, where its names are,
 * its diagnostics) is filed under the file's sha256, its paths and the
 * parser that made it. A command that loads the project (a build after an
 * edit, a build with .forge/ removed, `forge tool list`, `validate`,
 * `tool run`) parses only the files that changed since: parsing is the
 * largest part of loading a 200-tool project (about 35 ms of a cold
 * build's 220).
 *
 * The parser is the compiled CLI's own code (dist/forge-cli.cjs): its
 * version, size, mtime and inode name the parser, as they name its code
 * cache (runtime/code-cache.ts), so a rebuilt or upgraded Forge never takes
 * another parser's results. Run from source (tests that call the stages
 * directly), there is no such file and nothing is cached.
 *
 * One file per project, read once and written once per command (only when
 * an entry was added or a file went away), through a temp file and a
 * rename; touched when used (at most once a day), and removed when no
 * command used it for 30 days, as the build's other cache entries are. A
 * cache that cannot be read or written costs the parse, never the command.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { markUsed, removeUnused, writeFileAtomically } from './blob-cache.ts';
import { defaultCacheDir, forgeVersion } from './forge-paths.ts';
import { ownValue } from '../runtime/own-value.ts';

/** Bump when what an entry means changes while the CLI's file stays the same (it never does: a rebuild changes it). */
const FORMAT = 1;

export interface DocstringCache<Entry> {
  /** The entry parsing gave for `key` (the file's sha256 and paths), if this parser made one. */
  get(key: string): Entry | undefined;
  /** Keeps what parsing gave: copied now, as later stages may change the objects the parse returned. */
  set(key: string, entry: Entry): void;
  /** Writes the entries this command used, if any was added or left unused. */
  save(): void;
}

interface CacheFile {
  format: number;
  parser: string;
  entries: Record<string, unknown>;
}

/** The cache of the project at `root`, or undefined when this process is not the compiled CLI. */
export function openDocstringCache<Entry>(root: string, cacheDir: string = defaultCacheDir(), parser: string | undefined = compiledParser()): DocstringCache<Entry> | undefined {
  if (parser === undefined) return undefined;
  const file = join(cacheDir, 'docstrings', `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`);
  const stored = readStored(file, parser);
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
      if (!changed && Object.keys(used).length === Object.keys(stored).length) return;
      try {
        writeFileAtomically(file, JSON.stringify({ format: FORMAT, parser, entries: used } satisfies CacheFile));
        // Projects gone (or moved) leave their files: those no command used for 30 days go, and so do temp files a killed writer left.
        removeUnused(dirname(file), '.json');
        removeUnused(dirname(file), '.tmp');
      } catch {
        // A cache that cannot be written only costs the next command its parse.
      }
    },
  };
}

function readStored(file: string, parser: string): Record<string, unknown> {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as CacheFile;
    if (stored.format === FORMAT && stored.parser === parser && stored.entries && typeof stored.entries === 'object') return stored.entries;
  } catch {
    // None yet, or not one this module wrote whole.
  }
  return {};
}

/** The compiled CLI's build (dist/forge-cli.cjs), when this code runs from it; undefined from source. */
function compiledParser(): string | undefined {
  if (typeof __filename !== 'string' || !__filename.endsWith('forge-cli.cjs')) return undefined;
  try {
    const stat = statSync(__filename, { bigint: true });
    return `${forgeVersion()}-${stat.size}-${stat.mtimeNs}-${stat.ino}`;
  } catch {
    return undefined;
  }
}
