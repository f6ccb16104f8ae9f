import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitDirsInside, MAX_WALKED_DIRECTORIES, repositoriesUnder } from '../../../runtime/guard/git-repositories.ts';
import { tempDir } from '../../helpers/project.ts';

/** A tree with a repository at a/b, a .git file (a worktree's) at c, and a link to a/ that the walk must not follow. */
function tree(): string {
  const root = tempDir();
  mkdirSync(join(root, 'a', 'b', '.git'), { recursive: true });
  mkdirSync(join(root, 'c'), { recursive: true });
  writeFileSync(join(root, 'c', '.git'), 'gitdir: /elsewhere\n');
  for (let i = 0; i < 30; i++) mkdirSync(join(root, 'wide', `d${i}`, 'deeper'), { recursive: true });
  symlinkSync(join(root, 'a'), join(root, 'link'));
  return root;
}

describe('repositoriesUnder', () => {
  it('finds every directory holding a .git entry of any kind, without following links', async () => {
    const root = tree();
    const budget = { directories: 0 };
    expect(await repositoriesUnder(root, budget)).toEqual({ found: [join(root, 'a', 'b'), join(root, 'c')] });
    // root, a, a/b, c, wide, its 30 dirs and their 30 deeper ones: the link and .git's insides are not read.
    expect(budget.directories).toBe(65);
  });

  it('gives up past its budget of directories, so that the caller refuses instead of running git unchecked', async () => {
    const root = tree();
    expect(await repositoriesUnder(root, { directories: MAX_WALKED_DIRECTORIES - 65 })).toEqual({ found: [join(root, 'a', 'b'), join(root, 'c')] });
    expect(await repositoriesUnder(root, { directories: MAX_WALKED_DIRECTORIES - 64 })).toEqual({ tooMany: true });
  });

  it('lets the event loop turn while it walks a large tree', async () => {
    const root = tempDir();
    for (let i = 0; i < 60; i++) for (let j = 0; j < 100; j++) mkdirSync(join(root, `d${i}`, `e${j}`), { recursive: true });
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    try {
      await repositoriesUnder(root, { directories: 0 });
    } finally {
      clearInterval(counting);
    }
    // Read in one go (tens of milliseconds), 6,061 directories would let no timer fire before the walk ends.
    expect(turns).toBeGreaterThan(0);
  });
});

describe('gitDirsInside', () => {
  it('finds submodules\' git dirs under modules/ (names with slashes, nested ones) and worktrees\', and nothing inside them', async () => {
    const gitDir = join(tempDir(), '.git');
    for (const dir of ['modules/libs/core', 'modules/libs/core/modules/inner', 'worktrees/feature']) {
      mkdirSync(join(gitDir, dir, 'refs'), { recursive: true });
      writeFileSync(join(gitDir, dir, 'HEAD'), 'ref: refs/heads/main\n');
    }
    const walk = await gitDirsInside(gitDir, { directories: 0 });
    expect('found' in walk && walk.found.sort()).toEqual(['modules/libs/core', 'modules/libs/core/modules/inner', 'worktrees/feature'].map((d) => join(gitDir, d)));
  });
});
