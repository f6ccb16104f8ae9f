/**
 * Where git keeps repositories inside a git dir: submodules' git dirs under
 * modules/ (a name may have slashes, and a submodule's own submodules are
 * under its modules/), linked worktrees' under worktrees/. A directory
 * holding a HEAD file is one; its objects, refs and logs hold no other.
 * The sandbox's mounts (tool-sandbox.ts) and cli_execute's git check
 * (guard/git-repositories.ts) walk them with this one step.
 */
import { join } from 'node:path';

export interface DirEntry {
  name: string;
  isDir: boolean;
}

/** Where a walk for the git dirs inside `gitDir` starts. */
export function gitDirWalkRoots(gitDir: string, worktrees: boolean): string[] {
  return [join(gitDir, 'modules'), ...(worktrees ? [join(gitDir, 'worktrees')] : [])];
}

/** Whether `dir` (its entries given) is a git dir, and where the walk looks next. */
export function gitDirStep(dir: string, entries: readonly DirEntry[]): { gitDir: boolean; next: string[] } {
  if (entries.some((e) => e.name === 'HEAD' && !e.isDir)) return { gitDir: true, next: [join(dir, 'modules')] };
  return { gitDir: false, next: entries.filter((e) => e.isDir).map((e) => join(dir, e.name)) };
}
