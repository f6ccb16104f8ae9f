/**
 * Which file a path named when it was looked at: device and inode, with the
 * birth time (a file deleted and another created at once can get the freed
 * inode). A file replaced by a rename is another file.
 */
import type { Stats } from 'node:fs';

export interface FileIdentity {
  dev: number;
  ino: number;
  birthtimeMs: number;
}

export function identityOf(info: Pick<Stats, 'dev' | 'ino' | 'birthtimeMs'>): FileIdentity {
  return { dev: info.dev, ino: info.ino, birthtimeMs: info.birthtimeMs };
}

export function sameFile(info: Pick<Stats, 'dev' | 'ino' | 'birthtimeMs'>, identity: FileIdentity): boolean {
  return info.dev === identity.dev && info.ino === identity.ino && info.birthtimeMs === identity.birthtimeMs;
}
