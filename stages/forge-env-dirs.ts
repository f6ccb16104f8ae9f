/**
 * FORGE_CACHE_DIR, FORGE_HOME and FORGE_GLOBAL_TOOLS name directories Forge
 * makes when it first needs them. Set to a file, or to a path under one, they
 * cannot be made: without this check the cache went unused and the user and
 * global scopes read as empty, silently, though the user set the variable to
 * have them used.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DiagnosticError, error, warning, type Diagnostic } from '../runtime/diagnostics.ts';
import type { SharedScope } from './scopes.ts';

export type ForgeDirVariable = 'FORGE_CACHE_DIR' | 'FORGE_HOME' | 'FORGE_GLOBAL_TOOLS';

/** What goes without each directory, for the message. */
const WITHOUT: Record<ForgeDirVariable, string> = {
  FORGE_CACHE_DIR: "Forge's machine-wide cache is not used",
  FORGE_HOME: "the user scope's tools ($FORGE_HOME/tools) are not found or written",
  FORGE_GLOBAL_TOOLS: "the global scope's tools are not found or written",
};

const DEFAULT: Record<ForgeDirVariable, string> = {
  FORGE_CACHE_DIR: '~/.cache/forge',
  FORGE_HOME: '~/.forge',
  FORGE_GLOBAL_TOOLS: process.platform === 'win32' ? '%PROGRAMDATA%\\forge\\tools' : '/usr/local/share/forge/tools',
};

/** The variable that moves each shared scope's directory. */
const SCOPE_VARIABLE: Record<SharedScope, ForgeDirVariable> = { user: 'FORGE_HOME', global: 'FORGE_GLOBAL_TOOLS' };

/** The file that keeps `variable`'s path from being a directory, as a warning (FORGE_ENV_DIRECTORY); undefined when it is set to a usable path or not set. */
export function forgeDirProblem(variable: ForgeDirVariable, env: NodeJS.ProcessEnv = process.env): Diagnostic | undefined {
  const path = env[variable];
  if (!path) return undefined;
  const blocker = fileInTheWay(path);
  if (blocker === undefined) return undefined;
  const what = blocker === path ? 'is a file, not a directory' : `cannot be a directory: ${blocker} is a file`;
  return warning('FORGE_ENV_DIRECTORY', `${variable}=${path} ${what}: ${WITHOUT[variable]}`, {}, `point ${variable} at a directory (or a path Forge can make one at), or unset it for ${DEFAULT[variable]}`);
}

/** The warnings for every variable, in a fixed order. */
export function forgeDirProblems(env: NodeJS.ProcessEnv = process.env): Diagnostic[] {
  return (['FORGE_CACHE_DIR', 'FORGE_HOME', 'FORGE_GLOBAL_TOOLS'] as const).flatMap((variable) => forgeDirProblem(variable, env) ?? []);
}

/** The warning for the variable that moves a shared scope's directory (FORGE_HOME, FORGE_GLOBAL_TOOLS); undefined for the local scope. */
export function scopeDirProblem(scope: string, env: NodeJS.ProcessEnv = process.env): Diagnostic | undefined {
  return scope === 'user' || scope === 'global' ? forgeDirProblem(SCOPE_VARIABLE[scope], env) : undefined;
}

/**
 * Before writing into the user or global scope (forge tool add, forge tool install): a FORGE_HOME or
 * FORGE_GLOBAL_TOOLS that cannot be a directory refuses the command (FORGE_FILE_NOT_DIRECTORY, with the
 * warning's words) instead of Node's ENOTDIR or EEXIST.
 */
export function refuseUnusableScopeDir(scope: string, env: NodeJS.ProcessEnv = process.env): void {
  const problem = scopeDirProblem(scope, env);
  if (problem) throw new DiagnosticError([error('FORGE_FILE_NOT_DIRECTORY', problem.message.replace(/: [^:]*$/, ': nothing was written'), {}, problem.hint)]);
}

/** `path` or the nearest of its parents that exists, when that is not a directory; undefined when the path is one or can be made. */
function fileInTheWay(path: string): string | undefined {
  for (let at = path; ; at = dirname(at)) {
    let stat;
    try {
      stat = statSync(at, { throwIfNoEntry: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') continue; // a parent is the file: found further up
      return undefined; // unreadable (EACCES): not what this check is for
    }
    if (stat) return stat.isDirectory() ? undefined : at;
    if (dirname(at) === at) return undefined;
  }
}
