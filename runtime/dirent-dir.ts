/**
 * The folder a directory entry from readdir({ withFileTypes: true }) is in.
 * Node 20.12 named it `parentPath`; 20.10 and 20.11, which Forge supports
 * (engines), call it `path` only, and there `parentPath` is undefined.
 */
import type { Dirent } from 'node:fs';

export function direntDir(entry: Dirent): string {
  return entry.parentPath ?? (entry as Dirent & { path: string }).path;
}
