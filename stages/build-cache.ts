/**
 * The build cache: a rebuild with nothing changed does almost nothing, like
 * `go build`. A record lists every input the last build read (forge.yaml,
 * tool files, every file esbuild bundled, Forge's own code) with size, mtime
 * and sha256, the directories tools were discovered in (their mtimes change
 * when files are added or removed), and the outputs written.
 *
 * Checking a record only stats files; a file whose stat changed is hashed,
 * so touching a file without changing it is still a hit. This module uses
 * node builtins only: it is on the no-op path, which must start fast.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { forgeVersion } from './forge-paths.ts';
import { nodeCrypto } from './node-crypto.ts';
import { walkSourceTree } from './source-tree.ts';

export const CACHE_FORMAT = 1;

export interface CacheKey {
  forgeVersion: string;
  configFile: string;
  outDir: string;
  prod: boolean;
  sourceDateEpoch: string | null;
}

export interface FileStamp {
  path: string;
  size: number;
  mtimeMs: number;
  sha256?: string;
}

export interface CacheRecord<Summary = unknown> {
  format: number;
  key: CacheKey;
  inputs: FileStamp[];
  /** Directories searched for tools; `null` stamps a directory that did not exist. */
  directories: { path: string; mtimeMs: number | null }[];
  outputs: FileStamp[];
  summary: Summary;
  /** The build's warnings: a cache hit repeats them (a key file about to ship must not go quiet on the second build). */
  warnings?: Diagnostic[];
  /**
   * Inputs no file stat can vouch for (MCP servers asked, specs fetched from
   * the web): a build that asks them again cannot be a cache hit; one with
   * --offline can.
   */
  live?: string[];
}

/** What a build's outputs depend on besides its input files; one place builds it for the check and the record. */
export function cacheKey(configFile: string, outDir: string, prod: boolean): CacheKey {
  return { forgeVersion: forgeVersion(), configFile, outDir, prod, sourceDateEpoch: process.env.SOURCE_DATE_EPOCH ?? null };
}

/** One record per output directory and mode, named after them (.forge/cache/build-prod-.forge-output.json). */
export function cacheFile(projectRoot: string, key: Pick<CacheKey, 'outDir' | 'prod'>): string {
  // Two directories whose names share a shortened slot only take turns in it: the record's key still tells them apart.
  const outDir = encodeURIComponent(relative(projectRoot, key.outDir)).slice(-160);
  return join(projectRoot, '.forge', 'cache', `build-${key.prod ? 'prod' : 'dev'}-${outDir}.json`);
}

export function readCacheRecord<Summary>(file: string): CacheRecord<Summary> | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as CacheRecord<Summary>;
    return record.format === CACHE_FORMAT ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Why the record no longer describes the world, or undefined when it still does (a hit). */
export function staleReason(record: CacheRecord, key: CacheKey): string | undefined {
  for (const field of Object.keys(key) as (keyof CacheKey)[]) {
    if (record.key[field] !== key[field]) return `${field} changed`;
  }
  for (const dir of record.directories) {
    if (mtimeOf(dir.path) !== dir.mtimeMs) return `${dir.path} changed`;
  }
  for (const input of record.inputs) {
    if (!fileUnchanged(input, true)) return `${input.path} changed`;
  }
  for (const output of record.outputs) {
    if (!fileUnchanged(output, false)) return `${output.path} was modified or removed`;
  }
  return undefined;
}

/** Whether the file still matches its stamp: equal size and mtime, or (with `hashIfStatDiffers`) equal size and sha256. */
export function fileUnchanged(stamp: FileStamp, hashIfStatDiffers: boolean): boolean {
  return currentStamp(stamp, hashIfStatDiffers) !== undefined;
}

/**
 * The stamp the file matches now, or undefined if it changed: `stamp` itself when its stat is
 * the same; when only its bytes are (with `hashIfStatDiffers`), a stamp with the stat taken
 * before the hash, so that a save made after the hash still changes the stat it records.
 */
export function currentStamp(stamp: FileStamp, hashIfStatDiffers: boolean): FileStamp | undefined {
  let stats;
  try {
    stats = statSync(stamp.path);
  } catch {
    return undefined;
  }
  if (stats.size === stamp.size && stats.mtimeMs === stamp.mtimeMs) return stamp;
  if (!hashIfStatDiffers || stats.size !== stamp.size || !stamp.sha256 || hashFile(stamp.path) !== stamp.sha256) return undefined;
  return { ...stamp, mtimeMs: stats.mtimeMs };
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

export function hashFile(path: string): string {
  return nodeCrypto().createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function stampFile(path: string, withHash: boolean): FileStamp | undefined {
  try {
    const stats = statSync(path);
    const stamp: FileStamp = { path, size: stats.size, mtimeMs: stats.mtimeMs };
    if (withHash) stamp.sha256 = hashFile(path);
    return stamp;
  } catch {
    return undefined;
  }
}

/** Every directory under `root` (itself included) that discovery looks in, with its mtime. */
export function stampDirectories(root: string): { path: string; mtimeMs: number | null }[] {
  return walkSourceTree(root).directories.map((path) => ({ path, mtimeMs: mtimeOf(path) }));
}

export function writeCacheRecord(file: string, record: CacheRecord): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(record));
  } catch {
    // A cache that cannot be written only costs the next build its shortcut.
  }
}
