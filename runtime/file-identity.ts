/**
 * A file named by its stat, the way Forge's caches name what they were made
 * from without reading it (the compiled CLI for its code cache and project
 * caches, an interpreter, a shim's choices): size, mtime in nanoseconds and
 * inode. An edit in place changes the mtime, a replacement by rename the
 * inode.
 */
import type { BigIntStats } from 'node:fs';

export function fileIdentity(stat: Pick<BigIntStats, 'size' | 'mtimeNs' | 'ino'>): string {
  return `${stat.size}-${stat.mtimeNs}-${stat.ino}`;
}
