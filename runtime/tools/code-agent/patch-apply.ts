/**
 * file_patch, second half: run a checked plan step by step, remembering how
 * to undo each step as it is taken (the bytes and mode a file had, the
 * directories a step created). If a step fails, the steps already taken are
 * undone in reverse order, so the patch leaves all or nothing.
 */
import { chmod, mkdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileNoFollow } from '../../guard/no-follow-write.ts';
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

export const nodePatchIo: PatchIo = {
  async read(path) {
    const info = await stat(path).catch(() => undefined);
    if (!info) return undefined;
    return { bytes: await readFile(path), mode: info.mode & 0o7777 };
  },
  async write(path, data, mode) {
    await writeFileNoFollow(path, data, mode);
    // The mode given when creating is reduced by the umask; a restored file gets back exactly the one it had.
    if (mode !== undefined) await chmod(path, mode);
  },
  remove: (path) => unlink(path),
  rename: (from, to) => rename(from, to),
  makeParents: (path) => mkdir(dirname(path), { recursive: true }),
  removeTree: (path) => rm(path, { recursive: true, force: true }),
};

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

export async function applyPlan(steps: readonly PatchStep[], io: PatchIo = nodePatchIo): Promise<void> {
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
