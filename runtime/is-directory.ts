import { statSync } from 'node:fs';

/** Whether `path` is a directory this user can see (a symbolic link to one counts); false for anything else, missing or unreachable. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false; // a parent is a file (ENOTDIR), or cannot be searched
  }
}
