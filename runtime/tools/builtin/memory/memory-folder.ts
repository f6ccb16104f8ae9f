/**
 * Long-term memory: Markdown files under `.forge/memory/` in the work dir
 * (config `dir`). The folder is found through the work dir's path guard, and
 * paths inside it are resolved by a second guard rooted at the folder itself,
 * so memory_get reaches nothing else.
 */
import { stat } from 'node:fs/promises';
import fg from 'fast-glob';
import { PathGuard, PathRefusedError, type GuardedPath } from '../../../guard/path-guard.ts';
import type { Failure } from '../../fs-results.ts';
import { fail } from '../../model.ts';

export const DEFAULT_MEMORY_DIR = '.forge/memory';
/** The `config:` of memory_search and memory_get: both read the same folder. */
export const MEMORY_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { dir: { type: 'string', minLength: 1, default: DEFAULT_MEMORY_DIR, description: 'The memory folder, relative to the working directory.' } },
} as const;
/** Files and sizes the search reads at most. */
export const MAX_MEMORY_FILES = 5000;
export const MAX_MEMORY_FILE_BYTES = 2 * 1024 * 1024;

export interface MemoryFolder {
  /** The folder as the user knows it, relative to the work dir. */
  display: string;
  /** undefined when the folder does not exist yet. */
  guard: PathGuard | undefined;
}

/** The folder, or (as a result) why it cannot be used: it resolves outside the work dir. */
export async function openMemoryFolder(workDir: string, dir: string): Promise<MemoryFolder | Failure> {
  let folder: GuardedPath;
  try {
    // The folder is configured in forge.yaml (by default .forge/memory, in the state dir), not named by a caller.
    folder = new PathGuard(workDir, { allowStateDir: true }).resolve(dir);
  } catch (err) {
    if (err instanceof PathRefusedError) return fail(err.code, `the memory folder cannot be used: ${err.message}`, err.hint) as Failure;
    throw err;
  }
  const info = await stat(folder.absolute).catch(() => undefined);
  return { display: folder.relative, guard: info?.isDirectory() ? new PathGuard(folder.absolute) : undefined };
}

/** The Markdown files of the folder (relative paths, sorted); symlinks are not followed. */
export async function memoryFiles(folder: MemoryFolder): Promise<string[]> {
  if (!folder.guard) return [];
  const files = await fg('**/*.md', { cwd: folder.guard.workDir, onlyFiles: true, followSymbolicLinks: false, dot: false, suppressErrors: true });
  return files.sort().slice(0, MAX_MEMORY_FILES);
}
