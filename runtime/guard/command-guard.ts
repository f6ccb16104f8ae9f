/**
 * The command guard behind cli_execute, one layer per check:
 *
 * 1. shell interpreters are never run — by name, by absolute path, or
 *    through a symlink (the binary's real path is checked too), nor handed
 *    to a launcher (env, xargs, nohup, timeout, sudo, find -exec ...);
 * 2. only binaries on the allowlist run;
 * 3. allowed binaries are resolved to absolute paths once, when the tool
 *    starts; those not found are reported then and refused when called;
 * 4. arguments carrying command substitution ($( or a backtick), a newline
 *    or a file:// URL are refused;
 * 5. path-like arguments (also the value of --flag=VALUE, or of a short
 *    option with its value glued on, -C/dir) that resolve into the home
 *    directory, or to a directory above it (/, /home), but outside the work
 *    dir are refused;
 * 6. programs that run other programs through options, config or URLs
 *    (git, find, tar, awk, sed ...) pass the launcher policy
 *    (launcher-policy.ts, applied by launcher-check.ts).
 *
 * Commands run with argv, never through a shell, so there is nothing else
 * to expand; these checks stop the ways an argument could still reach out.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { LONE_SURROGATE } from '../lone-surrogate.ts';
import { isWithin, resolvePhysical } from './path-guard.ts';
import { ownValue } from '../own-value.ts';

export const SHELLS: readonly string[] = ['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'pdksh', 'ash', 'csh', 'tcsh', 'fish', 'busybox', 'pwsh', 'powershell', 'rbash', 'elvish', 'nu', 'xonsh'];

/** Programs whose job is to run another program named in their arguments. */
const LAUNCHERS: readonly string[] = ['env', 'xargs', 'nohup', 'timeout', 'nice', 'ionice', 'stdbuf', 'setsid', 'sudo', 'doas', 'su', 'runuser', 'chroot', 'unshare', 'nsenter', 'strace', 'ltrace', 'time', 'watch', 'flock', 'script', 'parallel', 'chrt', 'taskset', 'prlimit', 'systemd-run', 'expect'];
/** Options after which many tools (find, fd) run the next argument as a program. */
const EXEC_OPTIONS = ['-exec', '-execdir', '-ok', '-okdir', '--exec', '-x', '-X', '--exec-batch'];

export interface ResolvedBinary {
  name: string;
  /** Where it was found on PATH (or as configured): what is run. */
  path: string;
  /** The file it is after symlinks. */
  real: string;
}

export interface Allowlist {
  binaries: Map<string, ResolvedBinary>;
  /** Allowed names that were not found when the tool started. */
  missing: string[];
  /** Allowed names that are shells (or links to one): never run. */
  shells: string[];
}

export interface CommandRefusal {
  code: 'FORGE_CLI_SHELL' | 'FORGE_CLI_NOT_ALLOWED' | 'FORGE_CLI_MISSING' | 'FORGE_CLI_ARGUMENT' | 'FORGE_CLI_PATH' | 'FORGE_CLI_LAUNCHER';
  message: string;
  hint?: string;
}

export function isShell(pathOrName: string): boolean {
  const name = basename(pathOrName).toLowerCase().replace(/\.exe$/, '');
  return SHELLS.includes(name);
}

/** Resolves the allowlist against PATH, once. */
export function resolveAllowlist(names: readonly string[], pathVariable: string): Allowlist {
  const allowlist: Allowlist = { binaries: new Map(), missing: [], shells: [] };
  for (const name of names) {
    const found = name.includes('/') ? (isAbsolute(name) && isExecutableFile(name) ? name : undefined) : findOnPath(name, pathVariable);
    if (!found) {
      allowlist.missing.push(name);
      continue;
    }
    const real = realpathSync(found);
    if (isShell(name) || isShell(real)) {
      allowlist.shells.push(name);
      continue;
    }
    allowlist.binaries.set(name, { name, path: found, real });
  }
  return allowlist;
}

/** Which allowed binary a request names (a name, or a path: relative ones are read from the work dir), or why it may not run. */
export function checkBinary(allowlist: Allowlist, requested: string, workDir: string): ResolvedBinary | CommandRefusal {
  const allowedNames = [...allowlist.binaries.keys()];
  const listHint = allowedNames.length ? `allowed: ${allowedNames.join(', ')}` : 'no binaries are allowed: list them in forge.yaml under cli_execute\'s config.allowed_binaries';
  let real: string | undefined;
  if (requested.includes('/')) {
    try {
      real = realpathSync(resolve(workDir, requested));
    } catch {
      real = undefined;
    }
  }
  if (isShell(requested) || (real && isShell(real)) || allowlist.shells.includes(requested)) {
    return { code: 'FORGE_CLI_SHELL', message: `"${requested}" is a shell interpreter; cli_execute never runs shells`, hint: 'run the program you need directly, with its arguments as a list' };
  }
  if (allowlist.missing.includes(requested)) {
    return { code: 'FORGE_CLI_MISSING', message: `"${requested}" is allowed but was not found on PATH when the agent started`, hint: 'install it in the agent\'s environment and restart the agent' };
  }
  const byName = allowlist.binaries.get(requested);
  if (byName) return byName;
  for (const binary of allowlist.binaries.values()) {
    if (real && (binary.real === real || binary.path === requested)) return binary;
    // "jq" names a binary allowed by its absolute path, /opt/tools/jq.
    if (!real && !requested.includes('/') && basename(binary.path) === requested) return binary;
  }
  return { code: 'FORGE_CLI_NOT_ALLOWED', message: `"${requested}" is not an allowed binary`, hint: listHint };
}

export interface ArgumentContext {
  workDir: string;
  home: string;
  binary: ResolvedBinary;
}

export function checkArguments(args: readonly string[], context: ArgumentContext): CommandRefusal | undefined {
  const launcher = LAUNCHERS.includes(basename(context.binary.real)) || LAUNCHERS.includes(context.binary.name);
  for (const [i, arg] of args.entries()) {
    const shown = JSON.stringify(arg.length > 80 ? `${arg.slice(0, 80)}…` : arg);
    if (arg.includes('$(') || arg.includes('`')) return argumentRefusal(i, shown, 'contains command substitution ($( or `)');
    if (/[\n\r]/.test(arg)) return argumentRefusal(i, shown, 'contains a line break');
    if (/file:\/\//i.test(arg)) return argumentRefusal(i, shown, 'contains a file:// URL');
    if (arg.includes('\0')) return argumentRefusal(i, shown, 'contains a NUL byte');
    // Node would pass U+FFFD in its place: the program would get an argument other than the one checked.
    if (LONE_SURROGATE.test(arg)) return argumentRefusal(i, shown, 'contains half of a surrogate pair, which has no UTF-8 form');
    if ((launcher || EXEC_OPTIONS.includes(args[i - 1] ?? '')) && namesShell(arg, context.workDir)) {
      return { code: 'FORGE_CLI_SHELL', message: `argument ${i + 1} (${shown}) would make ${context.binary.name} run a shell`, hint: 'cli_execute never runs shells, directly or through another program' };
    }
    for (const value of pathCandidates(arg, context.binary)) {
      const problem = homePathProblem(value, context);
      if (problem) return { code: 'FORGE_CLI_PATH', message: `argument ${i + 1} (${shown}) ${problem}`, hint: 'commands may use paths inside the working directory, but not elsewhere in the home directory, nor a directory above it' };
    }
  }
  return undefined;
}

function argumentRefusal(index: number, shown: string, why: string): CommandRefusal {
  return { code: 'FORGE_CLI_ARGUMENT', message: `argument ${index + 1} (${shown}) ${why}`, hint: 'pass plain values; nothing is expanded by a shell' };
}

/**
 * The argument itself, the value of a --flag=VALUE argument, and the value
 * glued to a short option (tar -C/dir, -f/file, a cluster -xzf/file) when it
 * reads as a path: getopt takes the rest of the argument as the value, so
 * "-C/root/x" is the path /root/x, not a file named "-C/root/x".
 */
function pathCandidates(arg: string, binary: ResolvedBinary): string[] {
  const out = [arg];
  const flagValue = /^-{1,2}[^=\s]+=(.*)$/s.exec(arg);
  if (flagValue) out.push(flagValue[1]);
  const gluedValue = /^-([A-Za-z0-9]+?)(\.\.?|(?:\/|~|\.\.?\/).*)$/s.exec(arg);
  if (gluedValue && !isSeparatorOption(binary, gluedValue[1])) out.push(gluedValue[2]);
  return out;
}

/**
 * Short options whose glued value is a separator, never a path: `cut -d/`,
 * `awk -F/`, `sort -t/`. None of these programs opens what follows them.
 */
const SEPARATOR_OPTIONS: Record<string, string> = { cut: 'd', paste: 'd', awk: 'F', gawk: 'F', mawk: 'F', nawk: 'F', sort: 't', join: 't', column: 'so' };

function isSeparatorOption(binary: ResolvedBinary, options: string): boolean {
  const letters = ownValue(SEPARATOR_OPTIONS, basename(binary.name));
  return letters !== undefined && options.length === 1 && letters.includes(options);
}

function isPathLike(value: string): boolean {
  return value.startsWith('~') || value.startsWith('/') || value === '.' || value === '..' || value.startsWith('./') || value.startsWith('../') || value.includes('/');
}

function homePathProblem(value: string, context: ArgumentContext): string | undefined {
  if (!isPathLike(value)) return undefined;
  if (/^~[^/]/.test(value)) return 'names another user\'s home directory';
  const expanded = value === '~' || value.startsWith('~/') ? join(context.home, value.slice(1)) : value;
  let physical: string;
  try {
    physical = resolvePhysical(resolve(context.workDir, expanded));
  } catch {
    return undefined; // Not a resolvable path (a symlink loop): the command will not reach a file through it either.
  }
  const home = safeReal(context.home);
  const workDir = safeReal(context.workDir);
  if (isWithin(workDir, physical)) return undefined;
  if (isWithin(home, physical)) return 'leads into the home directory outside the working directory';
  // A directory above home (/, /home) holds it: a recursive reader (rg, grep -r, find, tar) given one reads home too.
  if (isWithin(physical, home)) return 'is a directory that contains the home directory, so a program reading it recursively reads the home directory';
  return undefined;
}

function namesShell(arg: string, workDir: string): boolean {
  if (isShell(arg)) return true;
  if (!arg.includes('/')) return false;
  try {
    return isShell(realpathSync(resolve(workDir, arg)));
  } catch {
    return false;
  }
}

function safeReal(path: string): string {
  try {
    return resolvePhysical(resolve(path));
  } catch {
    return resolve(path);
  }
}

export function findOnPath(name: string, pathVariable: string): string | undefined {
  for (const dir of pathVariable.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // a relative PATH entry would depend on the cwd
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** A regular file this process may execute (a directory has the x bit too, and is not one). */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
