/**
 * FORGE_CACHE_DIR, FORGE_HOME and FORGE_GLOBAL_TOOLS name directories Forge
 * makes when it first needs them. Set to a file, or to a path under one, they
 * cannot be made: without this check the cache went unused and the user and
 * global scopes read as empty, silently, though the user set the variable to
 * have them used. A directory this user cannot write (a read-only mount, one
 * owned by root) is said too where Forge writes into it: the build kept
 * nothing in its cache without a word, and forge package and forge tool add
 * failed with Node's EACCES or EROFS.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isDirectory } from '../runtime/is-directory.ts';
import { DiagnosticError, error, warning, type Diagnostic } from '../runtime/diagnostics.ts';
import { defaultCacheDir } from './forge-paths.ts';
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

/**
 * The file that keeps `variable`'s path from being a directory, as a warning (FORGE_ENV_DIRECTORY); undefined
 * when it is set to a usable path or not set. FORGE_CACHE_DIR's directory (its default's too) is one Forge
 * writes into on its own, so one this user cannot write is warned of as well; the scopes' directories are
 * only read by most commands (the global one is often root's), and their writers check them (refuseUnusableScopeDir).
 */
export function forgeDirProblem(variable: ForgeDirVariable, env: NodeJS.ProcessEnv = process.env): Diagnostic | undefined {
  const path = env[variable];
  const blocker = path ? fileInTheWay(path) : undefined;
  if (path && blocker !== undefined) {
    const what = blocker === path ? 'is a file, not a directory' : `cannot be a directory: ${blocker} is a file`;
    return warning('FORGE_ENV_DIRECTORY', `${variable}=${path} ${what}: ${WITHOUT[variable]}`, {}, `point ${variable} at a directory (or a path Forge can make one at), or unset it for ${DEFAULT[variable]}`);
  }
  if (variable !== 'FORGE_CACHE_DIR') return undefined;
  const denied = notWritable(defaultCacheDir(env));
  return denied && warning('FORGE_ENV_DIRECTORY', `${cannotWrite(variable, defaultCacheDir(env), denied, env)}: nothing is kept in Forge's machine-wide cache`, {}, writableHint(variable, env));
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
 * Before writing into the user or global scope's directory `dir` (forge tool add, forge tool install): a
 * FORGE_HOME or FORGE_GLOBAL_TOOLS that cannot be a directory refuses the command (FORGE_FILE_NOT_DIRECTORY,
 * with the warning's words) instead of Node's ENOTDIR or EEXIST; a directory this user cannot write (the
 * default global one, as a user not root) refuses it (FORGE_FILE_PERMISSION, FORGE_FILE_READ_ONLY) instead
 * of Node's EACCES or EROFS.
 */
export function refuseUnusableScopeDir(scope: string, dir: string, env: NodeJS.ProcessEnv = process.env): void {
  const problem = scopeDirProblem(scope, env);
  if (problem) throw new DiagnosticError([error('FORGE_FILE_NOT_DIRECTORY', problem.message.replace(/: [^:]*$/, ': nothing was written'), {}, problem.hint)]);
  if (scope !== 'user' && scope !== 'global') return;
  const denied = notWritable(dir);
  if (!denied) return;
  const variable = SCOPE_VARIABLE[scope];
  throw new DiagnosticError([error(denied.code === 'EROFS' ? 'FORGE_FILE_READ_ONLY' : 'FORGE_FILE_PERMISSION', `${cannotWrite(variable, dir, denied, env)}: nothing was written`, {}, writableHint(variable, env))]);
}

/** Why this user cannot write `dir` (or make it: the nearest directory above that exists); undefined when it can. */
function notWritable(dir: string): { at: string; code: string } | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (!isDirectory(at)) {
      if (dirname(at) === at) return undefined;
      continue; // not there yet: made under its parent (a file in the way is fileInTheWay's)
    }
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EACCES';
      return code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? { at, code } : undefined;
    }
  }
}

/** "FORGE_CACHE_DIR=/x cannot be written: /x is on a read-only file system", naming the default when the variable is unset. */
function cannotWrite(variable: ForgeDirVariable, dir: string, denied: { at: string; code: string }, env: NodeJS.ProcessEnv): string {
  const named = env[variable] ? `${variable}=${env[variable]}` : `${dir} (${variable} is not set)`;
  const why = denied.code === 'EROFS' ? 'is on a read-only file system' : 'is not writable by this user';
  return `${named} cannot be written: ${denied.at} ${why} (${denied.code})`;
}

function writableHint(variable: ForgeDirVariable, env: NodeJS.ProcessEnv): string {
  return `point ${variable} at a directory this user can write${env[variable] ? `, or unset it for ${DEFAULT[variable]}` : ''}`;
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
