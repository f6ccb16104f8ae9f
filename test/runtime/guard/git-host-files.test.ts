/**
 * The work dir's repository config and hooks attacked through the file
 * tools, as a prompt-injected model would: set core.fsmonitor in
 * .git/config or plant a hook, and the person who works there runs it with
 * their next `git status` (a shell prompt runs one at every line), outside
 * any sandbox. Every write into .git (the pointers git follows to another
 * config too) in every spelling, through every writing tool, in a repository
 * that does not exist yet and through a path component swapped for a
 * symlink into .git is refused with FORGE_PATH_PROTECTED; reading them, and
 * the rest of the work dir, stay as they were.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../../runtime/tools/model.ts';
import { tempDir } from '../../helpers/project.ts';
import { swapping, symlinkSwappers } from '../../helpers/symlink-swapper.ts';
import { expectRefusal, tools, type ToolHarness } from '../../helpers/tools.ts';

const WRITING_TOOLS = ['file_read', 'file_write', 'file_edit', 'file_patch', 'atomic_edit'];
const PLANTED_CONFIG = '[core]\n\tfsmonitor = "touch /tmp/pwned-by-fsmonitor; false"\n';
const PLANTED_HOOK = '#!/bin/sh\ntouch /tmp/pwned-by-hook\n';

let work: string;
let configBefore: string;
let harness: ToolHarness;

beforeEach(async () => {
  work = join(tempDir('forge-git-host-'), 'work');
  mkdirSync(join(work, 'sub'), { recursive: true });
  execFileSync('git', ['init', '--quiet', work]);
  configBefore = readFileSync(join(work, '.git', 'config'), 'utf8');
  writeFileSync(join(work, 'notes.txt'), 'plain inside\n');
  harness = await tools(WRITING_TOOLS, { workDir: work });
});

const swappers = symlinkSwappers();

const refused = (result: ToolResult, label: string) => expectRefusal(result, 'FORGE_PATH_PROTECTED', /outside any sandbox/, label);

function nothingPlanted(): void {
  expect(readFileSync(join(work, '.git', 'config'), 'utf8')).toBe(configBefore);
  expect(readdirSync(join(work, '.git', 'hooks')).filter((name) => !name.endsWith('.sample'))).toEqual([]);
}

describe('the repository config and hooks', () => {
  // Spellings of the same places: direct, through "..", "./", a symlink the agent left, the absolute path.
  const SPELLINGS = ['.git', 'sub/../.git', './.git/.', 'to-git', '<work>/.git'];

  beforeEach(() => symlinkSync(join(work, '.git'), join(work, 'to-git')));

  it.each(SPELLINGS)('file_write refuses config and a hook under %s', async (spelling) => {
    const dir = spelling.replace('<work>', work);
    refused(await harness.call('file_write', { path: `${dir}/config`, content: PLANTED_CONFIG }), 'config');
    refused(await harness.call('file_write', { path: `${dir}/hooks/pre-commit`, content: PLANTED_HOOK }), 'hook');
    refused(await harness.call('file_write', { path: `${dir}/hooks/nested/dir/post-checkout`, content: PLANTED_HOOK }), 'hook in a new dir');
    nothingPlanted();
  });

  it('file_write refuses a submodule\'s or a worktree\'s config and hooks (git status runs a git in each submodule)', async () => {
    for (const path of ['.git/modules/lib/config', '.git/modules/lib/hooks/pre-commit', '.git/modules/a/modules/b/config', '.git/worktrees/w/config.worktree']) {
      refused(await harness.call('file_write', { path, content: PLANTED_CONFIG }), path);
      expect(existsSync(join(work, path)), path).toBe(false);
    }
  });

  it('file_write refuses the pointers git follows to another config: a commondir, the .git file of a worktree', async () => {
    mkdirSync(join(work, 'evil'));
    writeFileSync(join(work, 'evil', 'config'), PLANTED_CONFIG);
    refused(await harness.call('file_write', { path: '.git/commondir', content: '../evil\n' }), 'commondir');
    refused(await harness.call('file_write', { path: '.GIT/info/exclude', content: 'x\n' }), 'another case');
    expect(existsSync(join(work, '.git', 'commondir'))).toBe(false);
    // A work dir that is a linked worktree: its .git is a file naming the git dir.
    const linked = join(tempDir('forge-git-linked-'), 'work');
    mkdirSync(linked, { recursive: true });
    writeFileSync(join(linked, '.git'), `gitdir: ${join(work, '.git')}\n`);
    const inLinked = await tools(WRITING_TOOLS, { workDir: linked });
    refused(await inLinked.call('file_write', { path: '.git', content: `gitdir: ${join(work, 'evil')}\n` }), '.git file');
    expect(readFileSync(join(linked, '.git'), 'utf8')).toBe(`gitdir: ${join(work, '.git')}\n`);
  });

  it('file_edit, atomic_edit and file_patch refuse to change the config', async () => {
    refused(await harness.call('file_edit', { path: '.git/config', old_string: '[core]', new_string: PLANTED_CONFIG }), 'file_edit');
    refused(await harness.call('atomic_edit', { path: '.git/config', edits: [{ old_string: '[core]', new_string: PLANTED_CONFIG }] }), 'atomic_edit');
    refused(await harness.call('file_patch', { operations: [{ op: 'update', path: '.git/config', content: PLANTED_CONFIG }] }), 'file_patch update');
    refused(await harness.call('file_patch', { operations: [{ op: 'delete', path: '.git/config' }] }), 'file_patch delete');
    nothingPlanted();
  });

  it('file_patch refuses a hook in a new dir and leaves no dir behind', async () => {
    refused(await harness.call('file_patch', { operations: [{ op: 'add', path: '.git/hooks/deep/er/pre-commit', content: PLANTED_HOOK }] }), 'add');
    expect(existsSync(join(work, '.git', 'hooks', 'deep'))).toBe(false);
  });

  it('file_patch refuses to add a hook, or to move a file into the hooks', async () => {
    writeFileSync(join(work, 'hook.sh'), PLANTED_HOOK);
    refused(await harness.call('file_patch', { operations: [{ op: 'add', path: '.git/hooks/post-merge', content: PLANTED_HOOK }] }), 'add');
    refused(await harness.call('file_patch', { operations: [{ op: 'move', path: 'hook.sh', to: '.git/hooks/post-merge' }] }), 'move into hooks');
    expect(readFileSync(join(work, 'hook.sh'), 'utf8')).toBe(PLANTED_HOOK);
    nothingPlanted();
  });

  it('are still read, and the rest of the work dir is still written', async () => {
    expect(await harness.value<{ content: string }>('file_read', { path: '.git/config' })).toMatchObject({ content: expect.stringContaining('[core]') });
    expect(await harness.call('file_write', { path: 'notes.txt', content: 'changed\n' })).toMatchObject({ ok: true });
    expect(readFileSync(join(work, 'notes.txt'), 'utf8')).toBe('changed\n');
  });
});

describe('a nested repository (a submodule, a vendored repository), whose config git reads too', () => {
  // cli_execute lists a nested repository's config before it runs git, and git reads it again as it starts:
  // a write in between would run what the check never saw. Your own `git status` enters it as well.
  let nested: string;
  beforeEach(() => {
    nested = join(work, 'vendor', 'lib');
    mkdirSync(nested, { recursive: true });
    execFileSync('git', ['init', '--quiet', nested]);
    symlinkSync(join(nested, '.git'), join(work, 'to-nested-git'));
  });

  it.each(['vendor/lib/.git', 'vendor/../vendor/lib/.git', 'to-nested-git', '<work>/vendor/lib/.git'])('every writing tool refuses its config and hooks under %s', async (spelling) => {
    const dir = spelling.replace('<work>', work);
    const before = readFileSync(join(nested, '.git', 'config'), 'utf8');
    refused(await harness.call('file_write', { path: `${dir}/config`, content: PLANTED_CONFIG }), 'file_write config');
    refused(await harness.call('file_write', { path: `${dir}/hooks/pre-commit`, content: PLANTED_HOOK }), 'file_write hook');
    refused(await harness.call('file_edit', { path: `${dir}/config`, old_string: '[core]', new_string: PLANTED_CONFIG }), 'file_edit');
    refused(await harness.call('atomic_edit', { path: `${dir}/config`, edits: [{ old_string: '[core]', new_string: PLANTED_CONFIG }] }), 'atomic_edit');
    refused(await harness.call('file_patch', { operations: [{ op: 'update', path: `${dir}/config`, content: PLANTED_CONFIG }] }), 'file_patch');
    expect(readFileSync(join(nested, '.git', 'config'), 'utf8')).toBe(before);
    expect(readdirSync(join(nested, '.git', 'hooks')).filter((name) => !name.endsWith('.sample'))).toEqual([]);
  });

  it('refuses to make a repository anywhere in the work dir: a .git directory or a .git file pointing at a git dir', async () => {
    mkdirSync(join(work, 'evil'));
    writeFileSync(join(work, 'evil', 'config'), PLANTED_CONFIG);
    refused(await harness.call('file_write', { path: 'fresh/.git/config', content: PLANTED_CONFIG }), 'a new repository');
    refused(await harness.call('file_write', { path: 'fresh/.GIT/config', content: PLANTED_CONFIG }), 'in another case');
    refused(await harness.call('file_write', { path: 'sub/.git', content: `gitdir: ${join(work, 'evil')}\n` }), 'a .git file');
    writeFileSync(join(work, 'pointer'), `gitdir: ${join(work, 'evil')}\n`);
    refused(await harness.call('file_patch', { operations: [{ op: 'move', path: 'pointer', to: 'sub/.Git' }] }), 'moved into place');
    for (const path of ['fresh/.git', 'fresh/.GIT', 'sub/.git', 'sub/.Git']) expect(existsSync(join(work, path)), path).toBe(false);
  });

  it('are still read, and the nested work tree is still written', async () => {
    expect(await harness.value<{ content: string }>('file_read', { path: 'vendor/lib/.git/config' })).toMatchObject({ content: expect.stringContaining('[core]') });
    expect(await harness.call('file_write', { path: 'vendor/lib/README.md', content: '# lib\n' })).toMatchObject({ ok: true });
    expect(await harness.call('file_write', { path: 'vendor/lib/.gitignore', content: 'dist/\n' })).toMatchObject({ ok: true });
  });
});

describe('a work dir that is not a repository yet', () => {
  it('refuses a .git/config or a hook that would make it one, and leaves no .git behind', async () => {
    const bare = join(tempDir('forge-git-none-'), 'work');
    mkdirSync(bare, { recursive: true });
    const fresh = await tools(WRITING_TOOLS, { workDir: bare });
    refused(await fresh.call('file_write', { path: '.git/config', content: PLANTED_CONFIG }), 'config');
    refused(await fresh.call('file_write', { path: '.git/hooks/pre-commit', content: PLANTED_HOOK }), 'hook');
    expect(existsSync(join(bare, '.git'))).toBe(false);
  });
});

describe('a path component swapped for a symlink to .git, in a bounded race', () => {
  // The path guard sees work/sw as a directory or as the symlink (then it refuses the path as protected);
  // the open can meet the symlink after the check, and must not follow it into .git.
  it('file_write never lands in the config', async () => {
    mkdirSync(join(work, 'sw'));
    writeFileSync(join(work, 'sw', 'config'), 'inside\n');
    const swapper = swappers.start(join(work, 'sw'), join(work, '.git'));
    await swapping(join(work, 'sw'));
    let inside = 0;
    let notInside = 0;
    for (let i = 0; i < 600 || ((inside === 0 || notInside === 0) && i < 3000); i++) {
      const result = await harness.call('file_write', { path: 'sw/config', content: PLANTED_CONFIG });
      if (result.ok) inside++;
      else notInside++;
    }
    swapper.kill('SIGKILL');
    expect(readFileSync(join(work, '.git', 'config'), 'utf8')).toBe(configBefore);
    // The race was real both ways: calls wrote through the real directory, and others met the swap (refused
    // as protected where the path check saw the symlink, failed where the open met it or the parked name).
    expect(inside).toBeGreaterThan(0);
    expect(notInside).toBeGreaterThan(0);
  });
});
