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
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export type PathRefusalCode = 'FORGE_PATH_OUTSIDE' | 'FORGE_PATH_INVALID' | 'FORGE_WORKDIR_MISSING' | 'FORGE_FILE_NOT_REGULAR' | 'FORGE_FILE_HARDLINK';

export class PathRefusedError extends Error {
  constructor(
    readonly code: PathRefusalCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'PathRefusedError';
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
  constructor(readonly workDir: string) {}

  /** The work dir with its own symlinks resolved (a work dir reached through a symlink is fine). */
  root(): string {
    try {
      return realpathSync.native(this.workDir);
    } catch (err) {
      throw new PathRefusedError(
        'FORGE_WORKDIR_MISSING',
        `the working directory ${this.workDir} does not exist (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        'create it, or point forge.yaml\'s workdir (or --workdir) at an existing directory',
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
    return { absolute: physical, relative: toRelative(root, physical) };
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
