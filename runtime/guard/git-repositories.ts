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
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Past this many directories the walk gives up: the caller refuses rather than run git unchecked. */
export const MAX_WALKED_DIRECTORIES = 100_000;

export interface WalkBudget {
  directories: number;
}

/** Directories under `root` (itself included) that hold a `.git` entry, of any kind; undefined past the budget. */
export async function repositoriesUnder(root: string, budget: WalkBudget): Promise<string[] | undefined> {
  const found: string[] = [];
  const pending = [root];
  while (pending.length) {
    const batch = pending.splice(0, 32);
    budget.directories += batch.length;
    if (budget.directories > MAX_WALKED_DIRECTORIES) return undefined;
    for (const entries of await Promise.all(batch.map(listDir))) {
      for (const { dir, name, isDir } of entries) {
        if (name === '.git') found.push(dir);
        else if (isDir) pending.push(join(dir, name));
      }
    }
  }
  return found;
}

/**
 * Git dirs kept inside a git dir: submodules' under modules/ (a name may
 * have slashes, and a submodule's own submodules are under its modules/),
 * linked worktrees' under worktrees/. A directory holding HEAD is one.
 */
export async function gitDirsInside(gitDir: string, budget: WalkBudget): Promise<string[] | undefined> {
  const found: string[] = [];
  const pending = [join(gitDir, 'modules'), join(gitDir, 'worktrees')];
  while (pending.length) {
    const dir = pending.pop()!;
    if (++budget.directories > MAX_WALKED_DIRECTORIES) return undefined;
    const entries = await listDir(dir);
    if (entries.some((e) => e.name === 'HEAD' && !e.isDir)) {
      found.push(dir);
      pending.push(join(dir, 'modules'));
      continue; // its objects, refs and logs hold no repository
    }
    for (const e of entries) if (e.isDir) pending.push(join(dir, e.name));
  }
  return found;
}

async function listDir(dir: string): Promise<{ dir: string; name: string; isDir: boolean }[]> {
  try {
    // withFileTypes reports a symlink as a symlink, so nothing below is reached through one.
    return (await readdir(dir, { withFileTypes: true })).map((e) => ({ dir, name: e.name, isDir: e.isDirectory() }));
  } catch {
    return []; // unreadable or gone: git cannot enter it either
  }
}
