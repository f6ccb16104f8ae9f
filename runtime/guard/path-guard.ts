/**
 * The path guard: the one place that decides whether a path a tool was given
 * stays inside the work dir. Every file tool resolves its paths here and then
 * uses only the path this returns.
 *
 * A path is resolved against the work dir and then physically: symlinks are
 * followed (a dangling symlink is followed to where it points, since writing
 * through it would create its target), and for a path that does not exist
 * yet, its nearest existing parent is resolved and the rest appended. What
 * ends outside the work dir (itself resolved) is refused. The comparison is
 * by path segments, so /srv/app2 is not inside /srv/app.
 *
 * The agent's state dir, .forge/ in the work dir (sessions, approvals,
 * schedules, forged tools: what the runtime trusts when it starts again), is
 * refused too, as the tool sandbox hides it from commands: a file tool that
 * could write .forge/forged/ would plant a tool that comes back at restart
 * without build, tests or judge. Only the runtime's own stores that keep
 * files there (schedules, file_create, the memory folder) let it through.
 */
import { ForgeError } from '../diagnostics.ts';
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export type PathRefusalCode = 'FORGE_PATH_OUTSIDE' | 'FORGE_PATH_STATE' | 'FORGE_PATH_PROTECTED' | 'FORGE_PATH_INVALID' | 'FORGE_WORKDIR_MISSING' | 'FORGE_FILE_NOT_REGULAR' | 'FORGE_FILE_HARDLINK';

/** The agent's state dir, in the work dir (runtime/state/, tools/emergent/forged-store.ts, the scheduler keep their files there). */
export const STATE_DIR = '.forge';

/** Where one file system name can be spelled in other cases (.FORGE is .forge): macOS and Windows by default. */
const CASE_INSENSITIVE_NAMES = process.platform === 'darwin' || process.platform === 'win32';

export interface PathGuardOptions {
  /** Let paths into the state dir through: only for the runtime's own stores, never for a tool that takes a path from its caller. */
  allowStateDir?: boolean;
}

export class PathRefusedError extends ForgeError {
  declare readonly code: PathRefusalCode;
  constructor(code: PathRefusalCode, message: string, hint?: string) {
    super(code, message, hint);
  }
}

export interface GuardedPath {
  /** The physical absolute path (symlinks resolved): the one to open. */
  absolute: string;
  /** Relative to the work dir, with forward slashes; "." for the work dir itself. */
  relative: string;
}

/** Symlink hops followed before giving up (as the kernel's ELOOP limit does). */
const MAX_SYMLINK_HOPS = 40;

export class PathGuard {
  constructor(
    readonly workDir: string,
    private readonly options: PathGuardOptions = {},
  ) {}

  /** The work dir with its own symlinks resolved (a work dir reached through a symlink is fine). */
  root(): string {
    try {
      return realpathSync.native(this.workDir);
    } catch (err) {
      throw new PathRefusedError(
        'FORGE_WORKDIR_MISSING',
        `the working directory ${this.workDir} does not exist (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        'create it, or point forge.yaml\'s workdir (for the bundle also --workdir or FORGE_WORKDIR) at an existing directory',
      );
    }
  }

  /** Resolves `input` (relative to the work dir, or absolute) or throws PathRefusedError. */
  resolve(input: string): GuardedPath {
    if (input.includes('\0')) throw new PathRefusedError('FORGE_PATH_INVALID', `path ${JSON.stringify(input)} contains a NUL byte`);
    const root = this.root();
    const expanded = input === '~' || input.startsWith('~/') ? join(homedir(), input.slice(1)) : input;
    const lexical = resolve(root, expanded === '' ? '.' : expanded);
    let physical: string;
    try {
      physical = resolvePhysical(lexical);
    } catch (err) {
      throw new PathRefusedError('FORGE_PATH_INVALID', `path "${input}" cannot be resolved: ${(err as Error).message}`);
    }
    // The message names the path as given, never where a symlink leads outside.
    if (!isWithin(root, physical)) {
      throw new PathRefusedError('FORGE_PATH_OUTSIDE', `path "${input}" is outside the working directory`, `file tools only reach files under ${root}; use a path relative to it`);
    }
    this.checkState(root, physical, input);
    return { absolute: physical, relative: toRelative(root, physical) };
  }

  /**
   * Refuses a physical path (one resolved, or an open descriptor's own) in the state dir, unless this
   * guard allows it. Checked after every open too: a symlink swapped in later can lead there as well.
   */
  checkState(root: string, physical: string, shown: string): void {
    if (!this.options.allowStateDir && inStateDir(root, physical)) throw stateRefusal(shown);
  }

  /**
   * Refuses a change to the entry `name` of the directory `physicalDir` (both as the kernel has them)
   * when it is a `.git`, at any depth, or anything in one. The host's own git runs what a repository's
   * files name — a config's core.fsmonitor or filter, a hook, and the config a `commondir` or a
   * `.git` file points it to — on the next `git status` of whoever works there, outside any sandbox,
   * and `git status` enters nested repositories too. cli_execute checks a repository's config before
   * it runs git, and git reads it again as it starts: a write between the two would run what the
   * check never saw. File tools have no business there: git itself keeps those files.
   */
  checkChange(root: string, physicalDir: string, name: string, shown: string): void {
    // Folded on every platform: Linux mounts case-insensitive file systems too (vfat, CIFS, casefold ext4).
    const isGit = (segment: string) => segment.toLowerCase() === '.git';
    if (isGit(name) || relative(root, physicalDir).split(sep).some(isGit)) throw gitRefusal(shown);
  }

  /** checkChange() for a whole path (its directory and its last segment). */
  checkChangePath(root: string, physical: string, shown: string): void {
    this.checkChange(root, dirname(physical), basename(physical), shown);
  }

  /** Like resolve(), for a path already known to be physical (a file found by walking the tree). */
  relativeOf(absolute: string): string {
    return toRelative(this.root(), absolute);
  }
}

/** True when `path` is `root` or below it (segment-wise: /srv/app2 is not within /srv/app). */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** True when `path` (inside `root`) is the state dir or below it. */
function inStateDir(root: string, path: string): boolean {
  const first = relative(root, path).split(sep)[0];
  return CASE_INSENSITIVE_NAMES ? first.toLowerCase() === STATE_DIR : first === STATE_DIR;
}

function stateRefusal(shown: string): PathRefusedError {
  return new PathRefusedError(
    'FORGE_PATH_STATE',
    `path "${shown}" is in the agent's state directory (${STATE_DIR}/), which file tools do not read or write`,
    'the runtime keeps sessions, approvals, schedules and forged tools there; use forge_tool to make a tool, schedule_set for schedules, file_create for files to hand out',
  );
}

function gitRefusal(shown: string): PathRefusedError {
  return new PathRefusedError(
    'FORGE_PATH_PROTECTED',
    `path "${shown}" is in a repository's own files (.git), which file tools do not change`,
    'git runs the programs its files name (core.fsmonitor, filters, hooks) for whoever runs git here next, outside any sandbox; use git (cli_execute) for the repository, or change them yourself if you mean to',
  );
}

function toRelative(root: string, path: string): string {
  return relative(root, path).split(sep).join('/') || '.';
}

/**
 * The path the operating system would reach: symlinks followed all the way,
 * dangling ones included; segments that do not exist yet are appended to
 * their nearest existing parent.
 */
export function resolvePhysical(absolute: string, hops = 0): string {
  if (hops > MAX_SYMLINK_HOPS) throw new Error('too many levels of symbolic links');
  try {
    return realpathSync.native(absolute);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new Error(code === 'ELOOP' ? 'too many levels of symbolic links' : (code ?? (err as Error).message));
  }
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  const physicalParent = resolvePhysical(parent, hops);
  let target: string | undefined;
  try {
    if (lstatSync(absolute).isSymbolicLink()) target = readlinkSync(absolute);
  } catch {
    // Does not exist (or its parent is a file): nothing to follow.
  }
  if (target !== undefined) return resolvePhysical(resolve(physicalParent, target), hops + 1);
  return join(physicalParent, basename(absolute));
}
