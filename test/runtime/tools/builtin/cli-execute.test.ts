import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { isAlive } from '../../../helpers/processes.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let home: string;
let work: string;
let bin: string;
let t: ToolHarness;
let env: NodeJS.ProcessEnv;

const PROBE = `
const fs = require('node:fs');
const [mode, ...rest] = process.argv.slice(2);
if (mode === 'argv') console.log(JSON.stringify(rest));
if (mode === 'where') console.log(JSON.stringify({ cwd: process.cwd(), env: Object.keys(process.env).sort(), home: process.env.HOME, token: process.env.GITHUB_TOKEN ?? null }));
if (mode === 'flood') process.stdout.write('x'.repeat(Number(rest[0])));
if (mode === 'exit') process.exit(Number(rest[0]));
if (mode === 'flood-then-token') process.stdout.write('a'.repeat(Number(rest[0])) + process.env.GITHUB_TOKEN);
if (mode === 'print-token-and-hang') {
  process.stdout.write('token ' + process.env.GITHUB_TOKEN + '\\n' + 'b'.repeat(Number(rest[0])));
  setInterval(() => {}, 1000);
}
if (mode === 'touch') fs.writeFileSync(rest[0], '');
if (mode === 'await') {
  const until = Date.now() + Number(rest[1]) * 1000;
  const look = () => (fs.existsSync(rest[0]) ? process.exit(0) : Date.now() > until ? process.exit(3) : setTimeout(look, 20));
  look();
}
if (mode === 'spawn-and-hang') {
  const child = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  fs.writeFileSync('child.pid', String(child.pid));
  setInterval(() => {}, 1000);
}
`;

beforeAll(async () => {
  home = tempDir('forge-home-');
  work = join(home, 'project');
  bin = join(home, 'bin');
  mkdirSync(join(work, 'src'), { recursive: true });
  mkdirSync(bin);
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY');
  writeFileSync(join(work, 'probe.js'), PROBE);
  writeFileSync(join(work, 'src', 'a.txt'), 'inside\n');
  symlinkSync(home, join(work, 'home-link'));
  // A harmless-looking name that is really a shell.
  symlinkSync('/bin/bash', join(bin, 'mytool'));
  symlinkSync('/bin/bash', join(work, 'innocent'));
  env = { PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', GITHUB_TOKEN: 'ghp_passed', AWS_SECRET_ACCESS_KEY: 'withheld' };
  t = await tools(['cli_execute'], {
    workDir: work,
    env,
    config: { cli_execute: { allowed_binaries: ['node', 'cat', 'env', 'find', 'ls', 'mytool', 'bash', 'not-installed-anywhere'], env_passthrough: ['GITHUB_TOKEN'], timeout: 5, max_output_bytes: 1024 } },
  });
});

interface CliValue {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  duration_ms: number;
}

describe('cli_execute runs allowed programs', () => {
  it('runs programs alongside each other, through a wrapper too (only git runs alone)', async () => {
    // The first waits for the file the second makes: run one after the other, the first would give up (exit 3).
    // Its 20 s to wait (under a 25 s limit) are for a loaded machine's process starts; alongside, it waits for one.
    const patient = await tools(['cli_execute'], { workDir: work, env, config: { cli_execute: { allowed_binaries: ['env', 'node'], timeout: 25 } } });
    const [waiting, making] = await Promise.all([
      patient.value<CliValue>('cli_execute', { binary: 'env', args: ['node', 'probe.js', 'await', 'made-alongside', '20'] }),
      patient.value<CliValue>('cli_execute', { binary: 'env', args: ['node', 'probe.js', 'touch', 'made-alongside'] }),
    ]);
    expect([waiting.exit_code, making.exit_code]).toEqual([0, 0]);
  });

  it('passes arguments as they are, with no shell to expand them', async () => {
    const args = ['a b', '*', '$HOME', "'quoted'", '; rm -rf /', '| cat', '> out', 'HEAD~1'];
    const value = await t.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'argv', ...args] });
    expect(value.exit_code).toBe(0);
    expect(JSON.parse(value.stdout)).toEqual(args);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('runs in the work dir with PATH, LANG, HOME = work dir and the passthrough variables only', async () => {
    const value = await t.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'where'] });
    const seen = JSON.parse(value.stdout);
    expect(seen.cwd).toBe(realpathSync(work));
    expect(seen.home).toBe(realpathSync(work));
    // The program printed the passed token; a secret-looking variable's value comes back masked.
    expect(seen.token).toBe('[REDACTED]');
    expect(seen.env).toEqual(['GITHUB_TOKEN', 'HOME', 'LANG', 'PATH']);
  });

  it('writes stdin to the program', async () => {
    expect(await t.value<CliValue>('cli_execute', { binary: 'cat', stdin: 'from stdin' })).toMatchObject({ exit_code: 0, stdout: 'from stdin' });
  });

  it('returns a non-zero exit code as a normal result', async () => {
    expect(await t.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'exit', '3'] })).toMatchObject({ exit_code: 3 });
  });

  it('caps stdout, says so, and lets the program finish', async () => {
    const value = await t.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'flood', '100000'] });
    expect(value).toMatchObject({ exit_code: 0, stdout_truncated: true, stderr_truncated: false });
    expect(value.stdout).toBe('x'.repeat(1024));
  });

  it('accepts an allowed binary by its absolute path', async () => {
    expect(await t.value<CliValue>('cli_execute', { binary: '/bin/cat', args: ['src/a.txt'] })).toMatchObject({ stdout: 'inside\n' });
  });

  it("quotes whole lines of a stopped program's output, so a token the tail cuts through does not show its end", async () => {
    const token = 'ghp_tail0123456789abcdef';
    const roomy = await tools(['cli_execute'], { workDir: work, env: { ...env, GITHUB_TOKEN: token }, config: { cli_execute: { allowed_binaries: ['node'], env_passthrough: ['GITHUB_TOKEN'], max_output_bytes: 16_384 } } });
    // 1990 characters after the token's line: the 2000-character tail begins inside the token.
    const result = await roomy.call('cli_execute', { binary: 'node', args: ['probe.js', 'print-token-and-hang', '1990'], timeout: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_TIMEOUT' } });
    expect(JSON.stringify(result)).not.toContain(token.slice(-9));
    expect(result).toMatchObject({ error: { details: expect.stringContaining(`stdout: …${'b'.repeat(1990)}`) } });
  });

  it('masks the start of a token its output cap (max_output_bytes) cuts through', async () => {
    const token = 'ghp_head0123456789abcdef';
    const capped = await tools(['cli_execute'], { workDir: work, env: { ...env, GITHUB_TOKEN: token }, config: { cli_execute: { allowed_binaries: ['node'], env_passthrough: ['GITHUB_TOKEN'], max_output_bytes: 1024 } } });
    // 1012 characters, then the token: the first 12 of its characters fit under the cap.
    const value = await capped.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'flood-then-token', '1012'] });
    expect(value).toMatchObject({ stdout_truncated: true, stdout: `${'a'.repeat(1012)}[REDACTED]` });
  });

  it('accepts by name a binary allowed by its absolute path', async () => {
    const byPath = await tools(['cli_execute'], { workDir: work, env, config: { cli_execute: { allowed_binaries: [process.execPath] } } });
    expect(await byPath.value<CliValue>('cli_execute', { binary: 'node', args: ['probe.js', 'exit', '0'] })).toMatchObject({ exit_code: 0 });
    expect(await byPath.call('cli_execute', { binary: 'cat' })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_NOT_ALLOWED' } });
  });

  it('stops a program that runs too long, with every process it started', async () => {
    const started = Date.now();
    const result = await t.call('cli_execute', { binary: 'node', args: ['probe.js', 'spawn-and-hang'], timeout: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_TIMEOUT', message: expect.stringContaining('every process it started') } });
    expect(Date.now() - started).toBeLessThan(4000);
    const childPid = Number(readFileSync(join(work, 'child.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(childPid)).toBe(false);
  });

  it('refuses a timeout above the configured one', async () => {
    expect(await t.call('cli_execute', { binary: 'cat', timeout: 50 })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_TIMEOUT_LIMIT' } });
  });
});

describe('cli_execute refuses', () => {
  it.each([['bash'], ['sh'], ['zsh'], ['fish'], ['dash'], ['ksh'], ['csh'], ['tcsh'], ['/bin/bash'], ['/usr/bin/dash'], ['/bin/sh']])('the shell %s', async (binary) => {
    expect(await t.call('cli_execute', { binary, args: ['-c', 'id'] })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_SHELL' } });
  });

  it('a shell behind a symlink, even when it is on the allowlist under another name', async () => {
    expect(t.warnings).toEqual(expect.arrayContaining([expect.stringContaining('"mytool" is a shell interpreter'), expect.stringContaining('"bash" is a shell interpreter')]));
    for (const binary of ['mytool', join(bin, 'mytool'), join(work, 'innocent'), './innocent']) {
      expect(await t.call('cli_execute', { binary, args: ['-c', 'id'] })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_SHELL' } });
    }
  });

  it.each([
    ['env', ['sh', '-c', 'id']],
    ['env', ['FOO=1', '/bin/bash']],
    ['find', ['.', '-exec', 'bash', '-c', 'id', ';']],
    ['find', ['.', '-exec', './innocent', ';']],
  ])('a shell handed to a launcher: %s %j', async (binary, args) => {
    expect(await t.call('cli_execute', { binary, args })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_SHELL' } });
  });

  it('a binary that is not allowed, listing the allowed ones', async () => {
    expect(await t.call('cli_execute', { binary: 'rm', args: ['-rf', 'src'] })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_NOT_ALLOWED', hint: expect.stringContaining('node, cat') } });
    expect(await t.call('cli_execute', { binary: '/usr/bin/id' })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_NOT_ALLOWED' } });
    expect(existsSync(join(work, 'src', 'a.txt'))).toBe(true);
  });

  it('an allowed binary that was not found at startup (reported then)', async () => {
    expect(t.warnings).toEqual(expect.arrayContaining([expect.stringContaining('"not-installed-anywhere" was not found on PATH')]));
    expect(await t.call('cli_execute', { binary: 'not-installed-anywhere' })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_MISSING' } });
  });

  it.each([['$(id)'], ['x`id`'], ['line\nbreak'], ['carriage\rreturn'], ['file:///etc/passwd'], ['--url=FILE://host/x'], ['nul\0byte'], ['half\ud800pair'], ['\udc00']])('the argument %j', async (arg) => {
    expect(await t.call('cli_execute', { binary: 'cat', args: [arg] })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_ARGUMENT' } });
  });

  it.each([
    ['~/.ssh/id_rsa'],
    ['~'],
    ['--key=~/.ssh/id_rsa'],
    ['-i=~/.ssh/id_rsa'],
    ['../.ssh/id_rsa'],
    ['home-link/.ssh/id_rsa'],
    ['HOME_ABSOLUTE'],
    ['~root/.bashrc'],
  ])('the path %s, which leads into the home directory outside the work dir', async (arg) => {
    const value = arg === 'HOME_ABSOLUTE' ? join(home, '.ssh', 'id_rsa') : arg;
    const result = await t.call('cli_execute', { binary: 'cat', args: [value] });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_PATH' } });
  });

  it.each([['src/a.txt'], ['./src/a.txt'], ['WORK_ABSOLUTE'], ['--file=src/a.txt']])('nothing about the path %s inside the work dir', async (arg) => {
    const value = arg === 'WORK_ABSOLUTE' ? join(work, 'src', 'a.txt') : arg;
    const result = await t.call('cli_execute', { binary: 'cat', args: [value.replace('--file=', '')] });
    expect(result).toMatchObject({ ok: true, value: { stdout: 'inside\n' } });
  });

  it('nothing about paths outside the home directory that do not contain it', async () => {
    expect(await t.call('cli_execute', { binary: 'ls', args: ['/usr'] })).toMatchObject({ ok: true, value: { exit_code: 0 } });
  });

  it('the root directory, which contains home', async () => {
    expect(await t.call('cli_execute', { binary: 'ls', args: ['/'] })).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_PATH' } });
  });
});

