/**
 * The TypeScript and JavaScript sources esbuild has parsed without an error,
 * by content: `forge tool run`, `forge validate` and `forge run`'s reload
 * look at a tool's syntax before running it, and a file unchanged since its
 * last check (under the same esbuild) is not parsed again. A run of a TS
 * tool whose compiled code is cached too (source-node-launcher.ts) then
 * starts no esbuild at all: loading its API and starting its service were a
 * tenth of the run.
 *
 * Kept in the project's .forge/cache as one small JSON list of hashes, the
 * oldest dropped first past a few thousand (a hit does not refresh one). A
 * lost write (two runs at once, a read-only project) only means a file is
 * parsed again.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { nodeCrypto } from './node-crypto.ts';
import { writeFileAtomically } from './blob-cache.ts';

/** What a parse's outcome depends on besides the text and the esbuild version: bump when check-sources' transform options change. */
const PARSE_FORMAT = 1;
/** Hashes kept: enough for every source of a large project, small enough to read in a fraction of a millisecond. */
const KEPT = 4096;

interface Stored {
  format: number;
  parsed: string[];
}

export class ParsedScripts {
  private readonly known: Set<string>;
  private added = false;

  private constructor(
    private readonly file: string,
    known: readonly string[],
    private readonly esbuildVersion: string,
  ) {
    this.known = new Set(known);
  }

  /**
   * The list kept for the project at `projectRoot` (empty when there is none yet, or it is not one this module
   * wrote), for texts parsed by esbuild `esbuildVersion` (by default the installed one).
   */
  static open(projectRoot: string, esbuildVersion = installedEsbuildVersion()): ParsedScripts {
    const file = join(projectRoot, '.forge', 'cache', 'parsed-scripts.json');
    let known: string[] = [];
    try {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Stored>;
      if (stored.format === PARSE_FORMAT && Array.isArray(stored.parsed)) known = stored.parsed.filter((h) => typeof h === 'string');
    } catch {
      // none yet, or unreadable: every file is parsed
    }
    return new ParsedScripts(file, known, esbuildVersion);
  }

  /** The key of this text parsed with this loader by this esbuild. */
  key(content: Uint8Array, loader: 'ts' | 'js'): string {
    return nodeCrypto().createHash('sha256').update(`${PARSE_FORMAT}\0${this.esbuildVersion}\0${loader}\0`).update(content).digest('hex');
  }

  has(key: string): boolean {
    return this.known.has(key);
  }

  add(key: string): void {
    if (this.known.has(key)) return;
    this.known.add(key);
    this.added = true;
  }

  /** Writes the list if a parse added to it; a failure to write is no failure of the check. */
  save(): void {
    if (!this.added) return;
    const stored: Stored = { format: PARSE_FORMAT, parsed: [...this.known].slice(-KEPT) };
    try {
      writeFileAtomically(this.file, JSON.stringify(stored));
      this.added = false;
    } catch {
      // a read-only project: the next run parses again
    }
  }
}

/** esbuild's version from its package.json: its API is not loaded for a check every file passes. */
function installedEsbuildVersion(): string {
  return (createRequire(import.meta.url)('esbuild/package.json') as { version: string }).version;
}
