/**
 * A file named by its stat, the way Forge's caches name what they were made
 * from without reading it (the compiled CLI for its code cache and project
 * caches, an interpreter, a shim's choices): size, mtime in nanoseconds and
 * inode. An edit in place changes the mtime, a replacement by rename the
 * inode.
 */
import { type BigIntStats, statSync } from 'node:fs';

export function fileIdentity(stat: Pick<BigIntStats, 'size' | 'mtimeNs' | 'ino'>): string {
  return `${stat.size}-${stat.mtimeNs}-${stat.ino}`;
}

/** The identity of the file or folder at `path` as it is now, or "-" when there is none (or it cannot be seen). */
export function pathIdentity(path: string): string {
  try {
    return fileIdentity(statSync(path, { bigint: true }));
  } catch {
    return '-';
  }
}
