/**
 * file_patch, second half: run a checked plan step by step, remembering how
 * to undo each step as it is taken (the bytes and mode a file had, the
 * directories a step created). If a step fails, the steps already taken are
 * undone in reverse order, so the patch leaves all or nothing.
 */
import { link, lstat, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PathGuard } from '../../guard/path-guard.ts';
import { entryInVerifiedDirectory, identityOf, openDirectoryVerified, readVerified, sameFile, writeVerified, type FileAccessOptions, type FileIdentity } from '../../guard/verified-open.ts';
import type { PatchStep } from './patch-plan.ts';

/** The file operations a patch uses; tests replace one to make a step fail. */
export interface PatchIo {
  read(path: string): Promise<{ bytes: Buffer; mode: number; identity: FileIdentity } | undefined>;
  /**
   * Writes a whole file that must be `new` (never replacing one) or `existing`
   * (never creating one; with `identity`, only that very file). Returns the
   * identity of the file written.
   */
  write(path: string, data: string | Buffer, options: { expect: 'new' | 'existing'; mode?: number; identity?: FileIdentity }): Promise<FileIdentity>;
  /** Unlinks `path` only if it is still the file `identity` names. */
  remove(path: string, identity: FileIdentity): Promise<void>;
  /**
   * Moves a file to a path that must not exist (never replacing a file that
   * appeared there); with `identity`, only that very file. Returns the
   * identity of the file moved.
   */
  move(from: string, to: string, identity?: FileIdentity): Promise<FileIdentity>;
  /** Creates the missing parents of `path`; returns the directories it made itself, outermost first. */
  makeParents(path: string): Promise<string[]>;
  /** Removes a directory only if it is empty (never its contents: what is in it is not the patch's to delete). */
  removeEmptyDirectory(path: string): Promise<void>;
}

/**
 * The file operations on verified descriptors: every read, write, unlink and
 * rename happens through a directory opened and checked inside the work dir,
 * so a component swapped for a symlink mid-patch cannot send it elsewhere.
 */
export function verifiedPatchIo(guard: PathGuard, access: FileAccessOptions = {}): PatchIo {
  const shown = (path: string) => guard.relativeOf(path);
  const inDirectory = async <T>(path: string, act: (entry: string) => Promise<T>): Promise<T> => {
    const entry = await entryInVerifiedDirectory(guard, path, shown(path));
    try {
      return await act(entry.path);
    } finally {
      await entry.close();
    }
  };
  return {
    async read(path) {
      try {
        const { bytes, info } = await readVerified(guard, path, shown(path), access);
        return { bytes, mode: info.mode & 0o7777, identity: identityOf(info) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async write(path, data, { expect, mode, identity }) {
      // The mode given when creating is reduced by the umask; a restored file gets back exactly the one it had (set on the descriptor).
      const written = await writeVerified(guard, path, shown(path), data, { ...access, mode, exactMode: mode !== undefined, mustNotExist: expect === 'new', mustExist: expect === 'existing', identity });
      return written.identity;
    },
    remove: (path, identity) =>
      inDirectory(path, async (entry) => {
        if (!sameFile(await lstat(entry), identity)) throw notTheFileTouched(shown(path));
        await unlink(entry);
      }),
    move: (from, to, identity) =>
      inDirectory(from, (source) =>
        inDirectory(to, async (destination) => {
          const info = await lstat(source);
          if (identity && !sameFile(info, identity)) throw notTheFileTouched(shown(from));
          if (info.isDirectory()) throw Object.assign(new Error(`${shown(from)} is a directory now, not the file the patch checked`), { code: 'EISDIR' });
          await moveWithoutReplacing(source, destination).catch((err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST' ? Object.assign(new Error(`${shown(to)} exists: not replaced, ${shown(from)} left where it is`), { code: 'EEXIST' }) : err;
          });
          return identityOf(info);
        }),
      ),
    async makeParents(path) {
      // What was made is what mkdir made, not what looked missing before: a directory renamed away for a
      // moment (or made by another process meanwhile) is not the patch's, and its rollback must not touch it.
      // Refused before any parent is made: a refused add must leave nothing behind.
      guard.checkChangePath(guard.root(), path, shown(path));
      const dir = await openDirectoryVerified(guard, dirname(path), shown(path), true);
      await dir.handle.close();
      return dir.created;
    },
    removeEmptyDirectory: (path) => inDirectory(path, (entry) => rmdir(entry)),
  };
}

const notTheFileTouched = (shown: string) => Object.assign(new Error(`${shown} is no longer the file this patch touched: left as it is`), { code: 'ESTALE' });

/**
 * rename(2) silently replaces a file at the destination, and Node has no
 * RENAME_NOREPLACE: a second name made with link(2) fails with EEXIST instead,
 * and the old name is then removed. Where hard links are not supported, the
 * destination is checked first and renamed to (a narrow window, the best left).
 */
export async function moveWithoutReplacing(source: string, destination: string, linkFile = link): Promise<void> {
  try {
    await linkFile(source, destination);
  } catch (err) {
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    // EPERM is also link(2)'s answer for a directory: a source swapped for one is not moved either.
    if ((await lstat(source)).isDirectory()) throw Object.assign(new Error('the source is a directory'), { code: 'EISDIR' });
    if (await lstat(destination).then(() => true, () => false)) throw Object.assign(new Error('the destination exists'), { code: 'EEXIST' });
    await rename(source, destination);
    return;
  }
  try {
    await unlink(source);
  } catch (err) {
    await unlink(destination).catch(() => {});
    throw err;
  }
}

type Undo = () => Promise<void>;

export class PatchApplyError extends Error {
  constructor(
    readonly stepIndex: number,
    readonly cause: Error,
    /** Undo steps that failed too (the files they name may need a look). */
    readonly rollbackFailures: string[],
  ) {
    super(cause.message);
  }
}

export async function applyPlan(steps: readonly PatchStep[], io: PatchIo): Promise<void> {
  const undo: Undo[] = [];
  for (const [i, step] of steps.entries()) {
    try {
      await applyStep(step, io, undo);
    } catch (err) {
      const failures: string[] = [];
      for (const revert of undo.reverse()) {
        try {
          await revert();
        } catch (undoError) {
          failures.push((undoError as Error).message);
        }
      }
      throw new PatchApplyError(i, err as Error, failures);
    }
  }
}

async function applyStep(step: PatchStep, io: PatchIo, undo: Undo[]): Promise<void> {
  const path = step.target.absolute;
  switch (step.kind) {
    case 'write': {
      if (!step.creates) {
        // The plan read this file: it must still be there, and the undo restores that very file only.
        const before = await io.read(path);
        if (!before) throw Object.assign(new Error(`${step.target.relative} disappeared before it could be updated`), { code: 'ENOENT' });
        const written = await io.write(path, step.content, { expect: 'existing', mode: before.mode, identity: before.identity });
        undo.push(() => io.write(path, before.bytes, { expect: 'existing', mode: before.mode, identity: written }).then(() => {}));
      } else {
        undo.push(removeDirectories(io, await io.makeParents(path)));
        const written = await io.write(path, step.content, { expect: 'new' });
        undo.push(() => removeIfPresent(io, path, written));
      }
      return;
    }
    case 'delete': {
      const before = await io.read(path);
      if (!before) throw Object.assign(new Error(`${step.target.relative} disappeared before it could be deleted`), { code: 'ENOENT' });
      await io.remove(path, before.identity);
      undo.push(() => io.write(path, before.bytes, { expect: 'new', mode: before.mode }).then(() => {}));
      return;
    }
    case 'move': {
      const to = step.to.absolute;
      undo.push(removeDirectories(io, await io.makeParents(to)));
      const moved = await io.move(path, to).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? Object.assign(new Error(`${step.to.relative} appeared before the move`), { code: 'EEXIST' }) : err;
      });
      // Back only the file this step moved, and only to a name still free: whatever took either place meanwhile stays.
      undo.push(() => io.move(to, path, moved).then(() => {}));
      return;
    }
  }
}

/** Undoes makeParents: the directories it made, innermost first, each only while empty. */
function removeDirectories(io: PatchIo, made: readonly string[]): Undo {
  return async () => {
    for (const dir of [...made].reverse()) await io.removeEmptyDirectory(dir);
  };
}

async function removeIfPresent(io: PatchIo, path: string, identity: FileIdentity): Promise<void> {
  try {
    await io.remove(path, identity);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
