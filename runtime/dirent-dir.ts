/**
 * Entries under a folder from readdir({ withFileTypes: true }). Node 20.12
 * named an entry's folder `parentPath`; 20.10 and 20.11, which Forge
 * supports (engines), call it `path` only, and there `parentPath` is
 * undefined.
 */
import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The folder `entry` is in. */
export function direntDir(entry: Dirent): string {
  return entry.parentPath ?? (entry as Dirent & { path: string }).path;
}

/** Every regular file under `dir`, at any depth, as an absolute path (readdir's order; links and folders left out). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => (entry.isFile() ? [join(direntDir(entry), entry.name)] : []));
}
