/**
 * File access on verified descriptors: open first, then prove that the
 * object opened lies inside the work dir, and only then read or write it.
 *
 * The path guard checks a path; between that check and the open a path
 * component can be swapped for a symlink to somewhere else. So the check
 * that counts is made on the descriptor:
 *
 * - Linux: the kernel's own path of the open object, /proc/self/fd/N, must
 *   be inside the root. Files are created by name inside a directory
 *   descriptor that was verified the same way (through /proc/self/fd/N/name),
 *   and directories are descended one segment at a time with O_NOFOLLOW, so
 *   nothing swapped later changes where a write lands.
 * - Elsewhere (no /proc): the path is resolved again after the open and its
 *   device and inode must be those of the descriptor; a narrower window, not
 *   none (documented in the README).
 *
 * Only regular files (and directories, where a caller lists them) are read
 * or written: every open carries O_NONBLOCK, so a FIFO never blocks the I/O
 * pool, and fstat refuses FIFOs, sockets and devices. A file with more than
 * one hard link is refused unless the caller allows it (a link made inside
 * the work dir to a file outside would otherwise read and overwrite it).
 *
 * Refusals name the path the caller gave, never where it leads.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, relative, sep } from 'node:path';
import { identityOf, sameFile, type FileIdentity } from '../exec/file-identity.ts';
import { isWithin, PathRefusedError, type PathGuard } from './path-guard.ts';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Whether descriptors can be named through /proc (Linux, /proc mounted). */
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

export interface FileAccessOptions {
  /** Read and write files with more than one hard link (forge.yaml: a file tool's `allow_hardlinks: true`). */
  allowHardlinks?: boolean;
}

export interface OpenedEntry {
  handle: FileHandle;
  info: Stats;
  /** A path naming the opened object itself (/proc/self/fd/N on Linux): use it, not the original path, for anything further. */
  self: string;
}

export interface OpenedDirectory extends OpenedEntry {
  /** Where the directory is, as the kernel sees it (for checks on what is changed in it). */
  actual: string;
  /** The directories this call's own mkdir made (with `create`), outermost first: one that existed, or that another process made meanwhile, is not here. */
  created: string[];
}

export function outsideRefusal(shown: string): PathRefusedError {
  return new PathRefusedError('FORGE_PATH_OUTSIDE', `path "${shown}" is outside the working directory`, 'file tools only reach files under the working directory; use a path relative to it');
}

function notRegular(shown: string, info?: Stats): PathRefusedError {
  const kind = !info ? 'not a regular file' : info.isFIFO() ? 'a FIFO (named pipe)' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : 'not a regular file';
  return new PathRefusedError('FORGE_FILE_NOT_REGULAR', `"${shown}" is ${kind}; file tools read and write regular files only`);
}

function hardLinked(shown: string, links: number): PathRefusedError {
  return new PathRefusedError('FORGE_FILE_HARDLINK', `"${shown}" has ${links} hard links; file tools refuse files linked from elsewhere`, 'set allow_hardlinks: true in this tool\'s config in forge.yaml if the work dir holds hard links on purpose');
}

/**
 * Where the descriptor's object is, as the kernel sees it (Linux), for the check against the root.
 *
 * The link is compared exactly as the kernel gives it. For an unlinked object the kernel appends
 * " (deleted)" to the last segment, which keeps an object that was inside the root inside it; cutting
 * the suffix off would instead let an outside sibling really named "<root> (deleted)" pass as the root.
 */
async function verify(handle: FileHandle, guard: PathGuard, root: string, path: string, shown: string): Promise<string> {
  return (await verifyWhere(handle, guard, root, path, shown)).self;
}

/** verify(), with where the object is as the kernel sees it. */
async function verifyWhere(handle: FileHandle, guard: PathGuard, root: string, path: string, shown: string): Promise<{ self: string; actual: string }> {
  if (PROC_FD) {
    const self = `/proc/self/fd/${handle.fd}`;
    const actual = await readlink(self);
    if (!isWithin(root, actual)) throw outsideRefusal(shown);
    guard.checkState(root, actual, shown);
    return { self, actual };
  }
  // No /proc: the path, resolved again, must still be inside and name the same object.
  const [opened, named] = await Promise.all([handle.stat(), stat(path).catch(() => undefined)]);
  const { realpath } = await import('node:fs/promises');
  const real = await realpath(path).catch(() => '');
  if (!named || named.dev !== opened.dev || named.ino !== opened.ino || !real || !isWithin(root, real)) throw outsideRefusal(shown);
  guard.checkState(root, real, shown);
  return { self: path, actual: real };
}

function checkKind(info: Stats, shown: string, options: FileAccessOptions, allowDirectory: boolean): void {
  if (info.isDirectory()) {
    if (allowDirectory) return;
    throw Object.assign(new Error(`"${shown}" is a directory`), { code: 'EISDIR' });
  }
  if (!info.isFile()) throw notRegular(shown, info);
  if (info.nlink > 1 && !options.allowHardlinks) throw hardLinked(shown, info.nlink);
}

/** Opens a guarded path for reading, verified inside the root; a directory only when `allowDirectory`. The caller closes the handle. */
export async function openForRead(guard: PathGuard, absolute: string, shown: string, options: FileAccessOptions = {}, allowDirectory = false): Promise<OpenedEntry> {
  const root = guard.root();
  let handle: FileHandle;
  try {
    handle = await open(absolute, READ_FLAGS);
  } catch (err) {
    throw translate(err, shown);
  }
  try {
    const self = await verify(handle, guard, root, absolute, shown);
    const info = await handle.stat();
    checkKind(info, shown, options, allowDirectory);
    return { handle, info, self };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Reads a whole regular file through a verified descriptor. */
export async function readVerified(guard: PathGuard, absolute: string, shown: string, options: FileAccessOptions = {}): Promise<{ bytes: Buffer; info: Stats }> {
  const { handle, info } = await openForRead(guard, absolute, shown, options);
  try {
    return { bytes: await handle.readFile(), info };
  } finally {
    await handle.close();
  }
}

/**
 * Reads a regular file through a verified descriptor, but never more than `maxBytes`: undefined when
 * it is larger (by fstat's size, or by what the reads find: a file may grow after fstat).
 */
export async function readVerifiedUpTo(guard: PathGuard, absolute: string, shown: string, maxBytes: number, options: FileAccessOptions = {}): Promise<Buffer | undefined> {
  const { handle, info } = await openForRead(guard, absolute, shown, options);
  try {
    if (info.size > maxBytes) return undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // Never asks for more than one byte past the cap.
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) return undefined;
    }
  } finally {
    await handle.close();
  }
}

/**
 * A directory inside the root, opened by descending from the root one
 * segment at a time without following symlinks (and created on the way when
 * `create`), verified. The caller closes the handle.
 */
export async function openDirectoryVerified(guard: PathGuard, absolute: string, shown: string, create = false): Promise<OpenedDirectory> {
  const root = guard.root();
  if (!isWithin(root, absolute)) throw outsideRefusal(shown);
  const segments = relative(root, absolute).split(sep).filter(Boolean);
  let handle = await open(root, DIR_FLAGS).catch((err) => {
    throw translate(err, shown);
  });
  let path = root;
  const created: string[] = [];
  try {
    for (const segment of segments) {
      const base = PROC_FD ? `/proc/self/fd/${handle.fd}` : path;
      const next = `${base}/${segment}`;
      let child: FileHandle;
      try {
        child = await open(next, DIR_FLAGS);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw err;
        // mkdir never follows a symlink at its last segment: one that appears here makes it fail (EEXIST), and the open below refuses it.
        const made = await mkdir(next).then(
          () => true,
          (mkdirError: NodeJS.ErrnoException) => {
            if (mkdirError.code !== 'EEXIST') throw mkdirError;
            return false;
          },
        );
        if (made) created.push(`${path}/${segment}`);
        child = await open(next, DIR_FLAGS);
      }
      await handle.close();
      handle = child;
      path = `${path}/${segment}`;
    }
    const { self, actual } = await verifyWhere(handle, guard, root, path, shown);
    return { handle, info: await handle.stat(), self, actual, created };
  } catch (err) {
    await handle.close();
    throw translate(err, shown);
  }
}

export interface WriteOutcome {
  created: boolean;
  /** The file written: undoing a write later touches only this very file. */
  identity: FileIdentity;
}

export { identityOf, sameFile, type FileIdentity } from '../exec/file-identity.ts';

/**
 * Writes a whole regular file: its directory is opened verified (parents
 * created when `makeParents`), the file is opened by name inside it with
 * O_NOFOLLOW (created with O_EXCL when new), checked, and only then truncated
 * and written.
 */
export async function writeVerified(
  guard: PathGuard,
  absolute: string,
  shown: string,
  data: string | Uint8Array,
  options: FileAccessOptions & {
    mode?: number;
    exactMode?: boolean;
    makeParents?: boolean;
    mustNotExist?: boolean;
    /** Refuse to create the file: it must be there (and, with `identity`, be that very file). */
    mustExist?: boolean;
    identity?: FileIdentity;
  } = {},
): Promise<WriteOutcome> {
  // Before any parent is made (a refused .git/config must not leave a .git behind), and again on the opened directory.
  guard.checkChangePath(guard.root(), absolute, shown);
  const dir = await openDirectoryVerified(guard, dirname(absolute), shown, options.makeParents ?? false);
  const name = `${dir.self}/${basename(absolute)}`;
  let handle: FileHandle | undefined;
  let created = false;
  try {
    guard.checkChange(guard.root(), dir.actual, basename(absolute), shown);
    if (options.mustExist) handle = await open(name, constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
    else {
      try {
        handle = await open(name, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NONBLOCK, options.mode ?? 0o666);
        created = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || options.mustNotExist) throw err;
        handle = await open(name, constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
      }
    }
    await verify(handle, guard, guard.root(), name, shown);
    const info = await handle.stat();
    checkKind(info, shown, options, false);
    if (options.identity && !sameFile(info, options.identity)) throw Object.assign(new Error(`${shown} is no longer the file it was: left as it is`), { code: 'ESTALE' });
    if (!created) await handle.truncate(0);
    try {
      await handle.writeFile(data);
      if (options.exactMode && options.mode !== undefined) await handle.chmod(options.mode);
    } catch (err) {
      // A file this call created and could not fill is not left behind (only that very file: the name is checked again).
      if (created && sameFile(await lstat(name).catch(() => ({ dev: -1, ino: -1, birthtimeMs: -1 })), identityOf(info))) await unlink(name).catch(() => {});
      throw err;
    }
    return { created, identity: identityOf(info) };
  } catch (err) {
    throw translate(err, shown);
  } finally {
    await handle?.close();
    await dir.handle.close();
  }
}

/** The verified directory holding `absolute` and the entry's path through it, for unlink and rename. */
export async function entryInVerifiedDirectory(guard: PathGuard, absolute: string, shown: string): Promise<{ path: string; close: () => Promise<void> }> {
  const dir = await openDirectoryVerified(guard, dirname(absolute), shown);
  try {
    guard.checkChange(guard.root(), dir.actual, basename(absolute), shown);
  } catch (err) {
    await dir.handle.close();
    throw err;
  }
  return { path: `${dir.self}/${basename(absolute)}`, close: () => dir.handle.close() };
}

/** Kernel answers that mean "not a regular file" or "a symlink appeared" become refusals naming the caller's path. */
function translate(err: unknown, shown: string): unknown {
  if (err instanceof PathRefusedError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  // ENXIO: a FIFO opened for writing with no reader (O_NONBLOCK), or a device without its driver.
  if (code === 'ENXIO' || code === 'ENODEV' || code === 'EOPNOTSUPP') return notRegular(shown);
  return err;
}
