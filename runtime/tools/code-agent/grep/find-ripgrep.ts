/**
 * Where ripgrep is: the path configured, else the binary the @vscode/ripgrep
 * package ships (there when running from sources with dependencies
 * installed; not inside a built bundle), else `rg` on PATH.
 */
import { findOnPath, isExecutableFile } from '../../../guard/command-guard.ts';

let packaged: Promise<string | undefined> | undefined;

export async function findRipgrep(configured: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (configured) return isExecutableFile(configured) ? configured : undefined;
  packaged ??= import('@vscode/ripgrep').then(
    (m) => (isExecutableFile(m.rgPath) ? m.rgPath : undefined),
    () => undefined,
  );
  return (await packaged) ?? findOnPath('rg', env.PATH ?? '');
}
