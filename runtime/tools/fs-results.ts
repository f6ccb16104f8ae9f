/**
 * How the file tools turn path refusals and file-system errors into results
 * a model can act on: a stable code, a message naming the path, a hint.
 */
import { PathRefusedError, type GuardedPath, type PathGuard } from '../guard/path-guard.ts';
import { fail, type ToolResult } from './model.ts';

export type Failure = Extract<ToolResult, { ok: false }>;

/** The guarded path, or the refusal as a result. */
export function guarded(guard: PathGuard, input: string): GuardedPath | Failure {
  try {
    return guard.resolve(input);
  } catch (err) {
    if (err instanceof PathRefusedError) return fail(err.code, err.message, err.hint) as Failure;
    throw err;
  }
}

export function isFailure(value: unknown): value is Failure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

const FS_ERRORS: Record<string, [code: string, text: string, hint?: string]> = {
  ENOENT: ['FORGE_FILE_NOT_FOUND', 'does not exist', 'check the path with glob_search or directory_tree'],
  EISDIR: ['FORGE_FILE_IS_DIRECTORY', 'is a directory'],
  ENOTDIR: ['FORGE_FILE_NOT_DIRECTORY', 'has a file where a directory is expected'],
  EACCES: ['FORGE_FILE_PERMISSION', 'is not accessible (permission denied)'],
  EPERM: ['FORGE_FILE_PERMISSION', 'is not accessible (operation not permitted)'],
  EEXIST: ['FORGE_FILE_EXISTS', 'already exists'],
  ELOOP: ['FORGE_PATH_INVALID', 'is a symbolic link (it changed after it was checked)'],
  ENOSPC: ['FORGE_FILE_NO_SPACE', 'cannot be written: the disk is full'],
  EROFS: ['FORGE_FILE_READ_ONLY', 'is on a read-only file system'],
  ENAMETOOLONG: ['FORGE_PATH_INVALID', 'has a name that is too long'],
};

/** A file-system error about `path` (as the user named it) as a result. */
export function fsFailure(err: unknown, path: string): Failure {
  if (err instanceof PathRefusedError) return fail(err.code, err.message, err.hint) as Failure;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const known = FS_ERRORS[code];
  if (known) return fail(known[0], `"${path}" ${known[1]}`, known[2]) as Failure;
  return fail('FORGE_FILE_ERROR', `"${path}": ${(err as Error).message}`) as Failure;
}

/** True when the first bytes look like a binary file (a NUL byte, as git and grep decide). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}
