/**
 * file_patch, second half: run a checked plan step by step, remembering how
 * to undo each step as it is taken (the bytes and mode a file had, the
 * directories a step created). If a step fails, the steps already taken are
 * undone in reverse order, so the patch leaves all or nothing.
 */
import { lstat, rename, rm, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PathGuard } from '../../guard/path-guard.ts';
import { entryInVerifiedDirectory, openDirectoryVerified, readVerified, writeVerified, type FileAccessOptions } from '../../guard/verified-open.ts';
import type { PatchStep } from './patch-plan.ts';

/** The file operations a patch uses; tests replace one to make a step fail. */
export interface PatchIo {
  read(path: string): Promise<{ bytes: Buffer; mode: number } | undefined>;
  write(path: string, data: string | Buffer, mode?: number): Promise<void>;
  remove(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Creates the missing parents of `path`; returns the topmost directory it created. */
  makeParents(path: string): Promise<string | undefined>;
  removeTree(path: string): Promise<void>;
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
        return { bytes, mode: info.mode & 0o7777 };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async write(path, data, mode) {
      // The mode given when creating is reduced by the umask; a restored file gets back exactly the one it had (set on the descriptor).
      await writeVerified(guard, path, shown(path), data, { ...access, mode, exactMode: mode !== undefined });
    },
    remove: (path) => inDirectory(path, (entry) => unlink(entry)),
    async rename(from, to) {
      await inDirectory(from, (source) => inDirectory(to, (destination) => rename(source, destination)));
    },
    async makeParents(path) {
      let topmostMissing: string | undefined;
      for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
        if (await lstat(dir).then(() => true, () => false)) break;
        topmostMissing = dir;
      }
      const dir = await openDirectoryVerified(guard, dirname(path), shown(path), true);
      await dir.handle.close();
      return topmostMissing;
    },
    removeTree: (path) => inDirectory(path, (entry) => rm(entry, { recursive: true, force: true })),
  };
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
      const before = await io.read(path);
      if (before) {
        undo.push(() => io.write(path, before.bytes, before.mode));
        await io.write(path, step.content, before.mode);
      } else {
        const createdDir = await io.makeParents(path);
        if (createdDir) undo.push(() => io.removeTree(createdDir));
        undo.push(() => removeIfPresent(io, path));
        await io.write(path, step.content);
      }
      return;
    }
    case 'delete': {
      const before = await io.read(path);
      if (!before) throw Object.assign(new Error(`${step.target.relative} disappeared before it could be deleted`), { code: 'ENOENT' });
      await io.remove(path);
      undo.push(() => io.write(path, before.bytes, before.mode));
      return;
    }
    case 'move': {
      const to = step.to.absolute;
      const createdDir = await io.makeParents(to);
      if (createdDir) undo.push(() => io.removeTree(createdDir));
      if (await io.read(to)) throw Object.assign(new Error(`${step.to.relative} appeared before the move`), { code: 'EEXIST' });
      await io.rename(path, to);
      undo.push(() => io.rename(to, path));
      return;
    }
  }
}

async function removeIfPresent(io: PatchIo, path: string): Promise<void> {
  try {
    await io.remove(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
