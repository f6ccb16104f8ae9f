/**
 * Entries a search found by path (fast-glob's walk, ripgrep's) looked at
 * again, this time through verified directory descriptors.
 *
 * A walk by path follows whatever a directory was swapped for while it ran:
 * a result such as `a/secret.txt` may have been read or listed through `a`
 * as a symlink to outside, and a check of that name afterwards passes once
 * `a` is swapped back. So nothing a walk reports is used as it is: each
 * result's directory is opened from the work dir one segment at a time
 * without following symlinks and verified (openDirectoryVerified), and the
 * entry is looked at by name inside that descriptor. A result whose path
 * has a symlink anywhere, or leads outside or into the state dir, is
 * dropped: the walks follow no symlinks, so no real result has one.
 */
import { basename, dirname, join } from 'node:path/posix';
import { openDirectoryVerified } from './verified-open.ts';
import type { PathGuard } from './path-guard.ts';

/**
 * Calls `look` for each of `paths` (relative to `searchRoot`, a physical directory inside the work dir, with
 * "/" separators) with a path naming that entry inside its verified directory (`/proc/self/fd/N/name` on
 * Linux), and returns its answers in the order of `paths`: undefined for an entry that did not verify, or
 * where `look` threw. Each directory is opened once, and closed before the next.
 */
export async function lookThroughVerifiedDirectories<R>(
  guard: PathGuard,
  searchRoot: string,
  paths: readonly string[],
  look: (through: string, shown: string) => Promise<R | undefined>,
): Promise<(R | undefined)[]> {
  const root = guard.root();
  const byDirectory = new Map<string, number[]>();
  paths.forEach((path, i) => {
    const dir = dirname(path);
    const indexes = byDirectory.get(dir);
    if (indexes) indexes.push(i);
    else byDirectory.set(dir, [i]);
  });
  const answers = new Array<R | undefined>(paths.length).fill(undefined);
  for (const [dir, indexes] of byDirectory) {
    const opened = await openDirectoryVerified(guard, join(searchRoot, dir), dir).catch(() => undefined);
    if (!opened) continue;
    try {
      await Promise.all(
        indexes.map(async (i) => {
          const name = basename(paths[i]);
          // The entry itself can be the state dir (".forge" found in the work dir): refused as an open there is.
          try {
            guard.checkState(root, join(opened.actual, name), paths[i]);
          } catch {
            return;
          }
          answers[i] = await look(`${opened.self}/${name}`, paths[i]).catch(() => undefined);
        }),
      );
    } finally {
      await opened.handle.close();
    }
  }
  return answers;
}
