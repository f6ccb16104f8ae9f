/**
 * Walks a tool directory: every file a tool could be or need, without
 * descending into dependency folders, caches or hidden folders. Discovery
 * and the build cache share this one walk, so they always agree on what
 * counts as an input. Node builtins only: the cache check runs it on the
 * no-op path.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders that are never searched for tools. */
export const PRUNED_DIRS = new Set(['node_modules', '__pycache__', '.git', '.venv', 'venv']);

/** Files that are never tools and never shipped: type declarations, tests, bytecode, dotfiles. */
export function isIgnoredFile(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.d.ts') || name.endsWith('.pyc') || /\.(test|spec)\.[^.]+$/.test(name);
}

function isPrunedDir(name: string): boolean {
  return PRUNED_DIRS.has(name) || name.startsWith('.');
}

export interface SourceTree {
  /** Files relative to the root, forward slashes, sorted. */
  files: string[];
  /** Absolute paths of the root and every folder searched under it. */
  directories: string[];
}

export function walkSourceTree(root: string): SourceTree {
  const files: string[] = [];
  const directories: string[] = [];
  const walk = (dir: string, prefix: string) => {
    directories.push(dir);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!isPrunedDir(entry.name)) walk(join(dir, entry.name), rel);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !isIgnoredFile(entry.name)) {
        files.push(rel);
      }
    }
  };
  walk(root, '');
  files.sort();
  return { files, directories };
}
