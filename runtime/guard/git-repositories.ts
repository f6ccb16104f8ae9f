/**
 * Where git could go besides the repository it is started in: the nested
 * repositories (submodules, embedded repositories) whose config a child git
 * reads when the parent runs `git status`, `git diff --submodule=diff`,
 * `--recurse-submodules` ... Found on disk, not from the index, because git
 * enters a submodule by the path a gitlink names in whatever tree it
 * compares, and every one it can enter has a `.git` entry in a work tree or
 * a git dir under some `.git/modules/`.
 *
 * Walks never follow symlinks (a `.git` that is a symlink is reported, and
 * git resolves it when asked about that directory) and never enter a git
 * dir's objects.
 *
 * Directories are read synchronously, a few milliseconds' worth at a time
 * between turns of the event loop: twice as fast as readdir on libuv's
 * thread pool (52,000 directories: 0.76 s → 0.4 s), whose hand-offs cost
 * more than the reads, and the server still answers meanwhile. One read is
 * not cut short: a directory of 200,000 entries holds the loop for about
 * 0.2 s.
 *
 * A directory the walk cannot read stops it: git may still enter a
 * repository inside by its path (a directory with mode 111 lets it), so
 * what is there cannot be checked.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gitDirStep, gitDirWalkRoots, type DirEntry } from '../exec/git-dirs.ts';

/** Past this many directories the walk gives up: the caller refuses rather than run git unchecked. */
export const MAX_WALKED_DIRECTORIES = 100_000;

export interface WalkBudget {
  directories: number;
}

/** What a walk found, or why it stopped: past its budget, or at a directory it cannot read. */
export type Walk = { found: string[] } | { tooMany: true } | { unreadable: string };

/** Directories under `root` (itself included) that hold a `.git` entry, of any kind. */
export async function repositoriesUnder(root: string, budget: WalkBudget): Promise<Walk> {
  const found: string[] = [];
  const pending = [root];
  const slice = new TimeSlice();
  while (pending.length) {
    if (slice.over()) await slice.next();
    const dir = pending.pop()!;
    if (++budget.directories > MAX_WALKED_DIRECTORIES) return { tooMany: true };
    const entries = listDir(dir);
    if (!entries) return { unreadable: dir };
    for (const { name, isDir } of entries) {
      if (name === '.git') found.push(dir);
      else if (isDir) pending.push(join(dir, name));
    }
  }
  return { found: found.sort() };
}

/** How long a walk reads before it lets the event loop turn. */
const SLICE_MS = 4;

/** Work done synchronously in slices of SLICE_MS, with a turn of the event loop between two. */
class TimeSlice {
  private ends = performance.now() + SLICE_MS;

  over(): boolean {
    return performance.now() > this.ends;
  }

  /** Resolves after the event loop has turned; a new slice begins. */
  next(): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        this.ends = performance.now() + SLICE_MS;
        resolve();
      }),
    );
  }
}

/** Git dirs kept inside a git dir: submodules' and linked worktrees' (exec/git-dirs.ts). */
export async function gitDirsInside(gitDir: string, budget: WalkBudget): Promise<Walk> {
  const found: string[] = [];
  const pending = gitDirWalkRoots(gitDir, true);
  const slice = new TimeSlice();
  while (pending.length) {
    if (slice.over()) await slice.next();
    const dir = pending.pop()!;
    if (++budget.directories > MAX_WALKED_DIRECTORIES) return { tooMany: true };
    const entries = listDir(dir);
    if (!entries) return { unreadable: dir };
    const step = gitDirStep(dir, entries);
    if (step.gitDir) found.push(dir);
    pending.push(...step.next);
  }
  return { found };
}

/** The entries of `dir`: none when it is gone (or not a directory), undefined when it cannot be read. */
function listDir(dir: string): DirEntry[] | undefined {
  try {
    // withFileTypes reports a symlink as a symlink, so nothing below is reached through one.
    return readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, isDir: e.isDirectory() }));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? [] : undefined; // gone: git cannot enter it either
  }
}
