/**
 * Whether a work dir can be served: the bundle refuses to start on one that is not a directory, and
 * `doctor` says so with the same words, so that its check passes exactly when the start would.
 */
import { statSync } from 'node:fs';

/** Why `workDir` cannot be the work dir, or undefined when it is a directory. */
export function workDirProblem(workDir: string): string | undefined {
  const stat = statSync(workDir, { throwIfNoEntry: false });
  if (!stat) return `${workDir} does not exist`;
  return stat.isDirectory() ? undefined : `${workDir} is not a directory`;
}
