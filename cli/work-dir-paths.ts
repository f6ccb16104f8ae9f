/**
 * `forge tool run` from a subdirectory of the project: tools resolve paths in
 * the work dir, not in the shell's directory. An argument that names a file
 * here but nothing in the work dir is most likely such a path; the failure
 * says how to write it.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export function workDirPathHint(args: Record<string, unknown>, cwd: string, workDir: string): string | undefined {
  const here = resolve(cwd);
  const root = resolve(workDir);
  if (here === root || !here.startsWith(root + sep)) return undefined;
  for (const value of Object.values(args)) {
    if (typeof value !== 'string' || value === '' || isAbsolute(value) || value.includes('\0')) continue;
    if (!existsSync(resolve(here, value)) || existsSync(resolve(root, value))) continue;
    const meant = relative(root, resolve(here, value));
    return `tools resolve paths in the work dir (${root}), not in this directory: "${value}" here is "${meant}" there`;
  }
  return undefined;
}
