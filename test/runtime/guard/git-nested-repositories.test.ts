/**
 * git through cli_execute in a superproject: git starts a git of its own in
 * every nested repository it compares (an embedded repository or a
 * submodule, checked out or kept under .git/modules/), and that git reads
 * the nested repository's config. An attacker who can write files writes a
 * filter driver there; each case runs the real git through cli_execute and
 * proves, by a marker file, that nothing ran, and that the refusal names the
 * nested repository. Clean superprojects (and a symlink loop in the tree)
 * still run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/project.ts';
import { tools, type ToolHarness } from '../../helpers/tools.ts';

const PATH = `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin`;

let base: string;
let work: string;
let marker: string;
let t: ToolHarness;

/** Setting up as the operator (or an earlier, allowed git call) would: plain git, no config of the machine's. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
    env: { PATH, HOME: join(base, 'home'), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    stdio: 'pipe',
  }).toString();
}

/** The attacker's writes: a filter driver in the nested repository's config, applied to its files, and a changed file of the same size (so git must clean it to compare). */
function plantFilter(configFile: string, tree: string): void {
  writeFileSync(configFile, `${readFileSync(configFile, 'utf8')}[filter "x"]\n\tclean = "touch ${marker}; cat"\n`);
  writeFileSync(join(tree, '.gitattributes'), '* filter=x\n');
  writeFileSync(join(tree, 'a.txt'), 'jello\n');
}

/** A repository at `dir` (its git dir `gitDir` when given) with one commit, recorded in the work dir's index as a gitlink. */
function nestedRepository(dir: string, gitDir?: string): void {
  if (gitDir) mkdirSync(join(gitDir, '..'), { recursive: true });
  git(work, 'init', '-q', ...(gitDir ? [`--separate-git-dir=${gitDir}`] : []), dir);
  writeFileSync(join(work, dir, 'a.txt'), 'hello\n');
  git(join(work, dir), 'add', 'a.txt');
  git(join(work, dir), 'commit', '-q', '-m', 'a');
  git(work, 'add', dir);
  git(work, 'commit', '-q', '-m', 'gitlink');
}

async function status(args = ['status', '--short']) {
  return t.call('cli_execute', { binary: 'git', args });
}

beforeEach(async () => {
  base = tempDir('forge-git-nested-');
  work = join(base, 'work');
  mkdirSync(work);
  mkdirSync(join(base, 'home'));
  marker = join(base, 'PWNED');
  git(work, 'init', '-q');
  t = await tools(['cli_execute'], { workDir: work, env: { PATH, HOME: join(base, 'home'), LANG: 'C.UTF-8' }, config: { cli_execute: { allowed_binaries: ['git'], timeout: 20 } } });
});

describe('git in a superproject, attacked through a nested repository', () => {
  it('the attack is real: plain git status runs the embedded repository\'s filter', () => {
    nestedRepository('sub');
    plantFilter(join(work, 'sub', '.git', 'config'), join(work, 'sub'));
    git(work, 'status', '--short');
    expect(existsSync(marker)).toBe(true);
  });

  it('refuses git status while an embedded repository\'s config (sub/.git/config) names a filter', async () => {
    nestedRepository('sub');
    plantFilter(join(work, 'sub', '.git', 'config'), join(work, 'sub'));
    const result = await status();
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringMatching(/nested repository's configuration \(sub\) sets filter\.x\.clean/) } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses git diff --submodule=diff while a submodule kept under .git/modules/ names a filter', async () => {
    nestedRepository('deep/sub', join(work, '.git', 'modules', 'sub'));
    plantFilter(join(work, '.git', 'modules', 'sub', 'config'), join(work, 'deep', 'sub'));
    const result = await status(['diff', '--submodule=diff']);
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining('filter.x.clean') } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses when the nested repository\'s gitdir: file points outside the work dir (git resolves it; so does the check)', async () => {
    nestedRepository('sub', join(base, 'elsewhere.git'));
    plantFilter(join(base, 'elsewhere.git', 'config'), join(work, 'sub'));
    const result = await status();
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining('filter.x.clean') } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a repository nested two levels down (a submodule of a submodule)', async () => {
    nestedRepository('sub');
    git(join(work, 'sub'), 'init', '-q', 'inner');
    writeFileSync(join(work, 'sub', 'inner', 'a.txt'), 'hello\n');
    git(join(work, 'sub', 'inner'), 'add', 'a.txt');
    git(join(work, 'sub', 'inner'), 'commit', '-q', '-m', 'a');
    git(join(work, 'sub'), 'add', 'inner');
    git(join(work, 'sub'), 'commit', '-q', '-m', 'gitlink');
    git(work, 'add', 'sub');
    git(work, 'commit', '-q', '-m', 'gitlink');
    plantFilter(join(work, 'sub', 'inner', '.git', 'config'), join(work, 'sub', 'inner'));
    const result = await status(['status', '--short', '--ignore-submodules=none']);
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining('sub/inner') } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses when the nested repository\'s path has a line break (git\'s answer about it is not read, the call is refused)', async () => {
    nestedRepository('a\nb');
    plantFilter(join(work, 'a\nb', '.git', 'config'), join(work, 'a\nb'));
    const result = await status();
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses git -C into a repository whose submodule names a filter', async () => {
    mkdirSync(join(work, 'proj'));
    git(join(work, 'proj'), 'init', '-q');
    const saved = work;
    work = join(saved, 'proj');
    nestedRepository('sub');
    work = saved;
    plantFilter(join(work, 'proj', 'sub', '.git', 'config'), join(work, 'proj', 'sub'));
    const result = await status(['-C', 'proj', 'status', '--short']);
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining('proj/sub') } });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('git in a clean superproject still runs', () => {
  it('git status with a clean submodule, an absorbed one and a symlink loop in the tree', async () => {
    nestedRepository('sub');
    nestedRepository('kept', join(work, '.git', 'modules', 'kept'));
    symlinkSync('.', join(work, 'loop'));
    symlinkSync(base, join(work, 'up'));
    writeFileSync(join(work, 'sub', 'a.txt'), 'jello\n');
    const result = await status();
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect((result.value as { stdout: string }).stdout).toContain('sub');
  });
});

describe('git subcommands as checked are the ones run', () => {
  it('a misspelled subcommand is not autocorrected into another one (help.autocorrect in the repository config)', async () => {
    git(work, 'commit', '-q', '--allow-empty', '-m', 'first');
    git(work, 'commit', '-q', '--allow-empty', '-m', 'second');
    git(work, 'bisect', 'start', 'HEAD', 'HEAD~1');
    git(work, 'config', 'help.autocorrect', '1');
    const result = await status(['bisectt', 'run', 'touch', marker]);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect((result.value as { exit_code: number }).exit_code).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a config written between the check and git\'s own read, in a bounded race', () => {
  // The check reads the nested repository's config, then git reads it again as it starts. Another
  // program run meanwhile — here git itself, setting an alias — would have git run what the check never
  // saw. Each round starts both calls at once; git's turn is its own from its check to its end.
  it('never runs an alias set by a call running alongside', async () => {
    git(work, 'init', '-q', 'sub');
    const runner = await tools(['cli_execute'], { workDir: work, env: { PATH, HOME: join(base, 'home'), LANG: 'C.UTF-8' }, config: { cli_execute: { allowed_binaries: ['git', 'env'], timeout: 20 } } });
    const configFile = join(work, 'sub', '.git', 'config');
    const harmless = readFileSync(configFile, 'utf8');
    for (let round = 0; round < 60 && !existsSync(marker); round++) {
      writeFileSync(configFile, harmless); // as before the round: no alias
      const [setting, running] = await Promise.all([
        runner.call('cli_execute', { binary: 'git', args: ['-C', 'sub', 'config', 'alias.pwn', `!touch ${marker}`] }),
        runner.call('cli_execute', { binary: 'git', args: ['-C', 'sub', 'pwn'] }),
      ]);
      // The same through a wrapper on both sides, which runs git just the same.
      writeFileSync(configFile, harmless);
      const [settingAgain, wrapped] = await Promise.all([
        runner.call('cli_execute', { binary: 'env', args: ['git', '-C', 'sub', 'config', 'alias.pwn', `!touch ${marker}`] }),
        runner.call('cli_execute', { binary: 'env', args: ['git', '-C', 'sub', 'pwn'] }),
      ]);
      expect(settingAgain.ok, JSON.stringify(settingAgain)).toBe(true);
      if (wrapped.ok) expect((wrapped.value as { exit_code: number }).exit_code, JSON.stringify(wrapped)).not.toBe(0);
      expect(setting.ok, JSON.stringify(setting)).toBe(true);
      // Either git ran first (no such command yet) or the check saw the alias and refused.
      if (running.ok) expect((running.value as { exit_code: number }).exit_code, JSON.stringify(running)).not.toBe(0);
      else expect(running.error.code).toBe('FORGE_CLI_LAUNCHER');
    }
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a git dir inside the work dir that is not a .git directory', () => {
  // File tools never write a .git, so a config there holds between the check and git's own read. A bare
  // repository or a --separate-git-dir under another name is theirs to write: git may not use it.
  const refusedFor = (where: string) => ({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringContaining(`keeps its files in ${where}, not in a .git directory`) } });

  it('refuses git in a bare repository, by -C, by --git-dir and as the repository of a work tree', async () => {
    git(work, 'init', '-q', '--bare', 'store');
    expect(await status(['-C', 'store', 'log'])).toMatchObject(refusedFor('store'));
    expect(await status(['--git-dir=store', 'log'])).toMatchObject(refusedFor('store'));
    expect(await status(['--git-dir', 'store', 'log'])).toMatchObject(refusedFor('store'));
    git(work, 'init', '-q', '--separate-git-dir=elsewhere', 'tree');
    expect(await status(['-C', 'tree', 'status'])).toMatchObject(refusedFor('elsewhere'));
  });

  it('refuses git in a superproject whose nested repository keeps its git dir under another name', async () => {
    nestedRepository('sub', join(work, 'sub-git'));
    expect(await status()).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER', message: expect.stringMatching(/the nested repository \(.*\) keeps its files in sub-git, not in a \.git directory/) } });
  });

  it('never runs an alias a file tool writes into a bare repository\'s config while git starts, in a bounded race', async () => {
    git(work, 'init', '-q', '--bare', 'store');
    const both = await tools(['cli_execute', 'file_write'], { workDir: work, env: { PATH, HOME: join(base, 'home'), LANG: 'C.UTF-8' }, config: { cli_execute: { allowed_binaries: ['git'], timeout: 20 } } });
    const harmless = readFileSync(join(work, 'store', 'config'), 'utf8');
    for (let round = 0; round < 30 && !existsSync(marker); round++) {
      writeFileSync(join(work, 'store', 'config'), harmless);
      const [, running] = await Promise.all([
        both.call('file_write', { path: 'store/config', content: `${harmless}[alias]\n\tpwn = !touch ${marker}\n` }),
        both.call('cli_execute', { binary: 'git', args: ['-C', 'store', 'pwn'] }),
      ]);
      expect(running).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_LAUNCHER' } });
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('still runs git in a repository whose git dir is outside the work dir', async () => {
    const outside = join(base, 'outside.git');
    git(base, 'init', '-q', '--bare', outside);
    const result = await status([`--git-dir=${outside}`, 'rev-parse', '--is-bare-repository']);
    expect(result).toMatchObject({ ok: true, value: { exit_code: 0, stdout: 'true\n' } });
  });
});
