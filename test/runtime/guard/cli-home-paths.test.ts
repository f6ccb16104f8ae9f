/**
 * cli_execute's home-directory promise attacked with real programs: a path
 * glued to a short option (tar -C/dir, -f/file, a cluster -czf/file), and a
 * directory above home handed to a recursive reader (rg over the parent of
 * home). Home holds a secret; each attack must be refused, and the secret
 * must not reach the output or an archive. Paths outside home, and glued
 * values inside the work dir, still work.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/project.ts';
import { tools, type ToolHarness } from '../../helpers/tools.ts';

const PATH = `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin`;
const SECRET = 'TOPSECRET-b8f1';

let base: string;
let home: string;
let work: string;
let t: ToolHarness;

beforeAll(async () => {
  base = tempDir('forge-home-paths-');
  home = join(base, 'home');
  work = join(home, 'work');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(work, 'src'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'key'), `${SECRET}\n`);
  writeFileSync(join(work, 'src', 'a.txt'), 'inside\n');
  t = await tools(['cli_execute'], { workDir: work, env: { PATH, HOME: home, LANG: 'C.UTF-8' }, config: { cli_execute: { allowed_binaries: ['tar', 'rg', 'ls', 'cut', 'sort', 'awk'], timeout: 20 } } });
});

/** What a tar archive in the work dir holds, if it was written. */
function archived(name: string): string {
  const path = join(work, name);
  return existsSync(path) ? execFileSync('tar', ['-tf', path]).toString() : '';
}

describe('paths glued to a short option', () => {
  it.each([
    ['-C<home>', (h: string) => ['-cf', 'o1.tar', `-C${h}`, '.ssh'], 'o1.tar'],
    ['-C<home>/.ssh', (h: string) => ['-cf', 'o2.tar', `-C${h}/.ssh`, 'key'], 'o2.tar'],
    ['-C..', () => ['-cf', 'o3.tar', '-C..', '.ssh'], 'o3.tar'],
    ['-C~', () => ['-cf', 'o4.tar', '-C~', '.ssh'], 'o4.tar'],
  ])('tar %s is refused and archives nothing from home', async (_what, args, out) => {
    const result = await t.call('cli_execute', { binary: 'tar', args: args(home) });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_PATH' } });
    expect(archived(out)).not.toContain('key');
  });

  it('tar -tf<home>/x.tar (the archive itself glued to a cluster) is refused', async () => {
    execFileSync('tar', ['-cf', join(home, 'x.tar'), '-C', home, '.ssh']);
    const result = await t.call('cli_execute', { binary: 'tar', args: [`-tf${join(home, 'x.tar')}`] });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_PATH' } });
    expect(JSON.stringify(result)).not.toContain('.ssh/key');
  });

  it.each([
    ['cut', ['-d/', '-f1', 'src/paths.txt'], 'a\nc\n'],
    ['cut', ['-d~', '-f2', 'src/paths.txt'], 'a/b\nc/d\n'],
    ['sort', ['-t/', '-k2', 'src/paths.txt'], 'a/b\nc/d\n'],
    ['awk', ['-F/', '{ print $2 }', 'src/paths.txt'], 'b\nd\n'],
  ])('a separator glued to %s %j is a separator, not a path above home', async (binary, args, expected) => {
    writeFileSync(join(work, 'src', 'paths.txt'), 'a/b\nc/d\n');
    expect(await t.call('cli_execute', { binary, args })).toMatchObject({ ok: true, value: { exit_code: 0, stdout: expected } });
  });

  it('a glued value inside the work dir still works (tar -C./src)', async () => {
    const result = await t.call('cli_execute', { binary: 'tar', args: ['-cf', 'ok.tar', '-C./src', 'a.txt'] });
    expect(result).toMatchObject({ ok: true, value: { exit_code: 0 } });
    expect(archived('ok.tar')).toContain('a.txt');
  });
});

describe('a directory above home', () => {
  it.each([
    ['the parent of home', () => base],
    ['/', () => '/'],
    ['.. twice from the work dir', () => '../..'],
  ])('rg over %s is refused, and the secret in home is not found', async (_what, dir) => {
    const result = await t.call('cli_execute', { binary: 'rg', args: ['--no-ignore', '--hidden', '-g', 'key', SECRET, dir()] });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_CLI_PATH', message: expect.stringContaining('contains the home directory') } });
    expect(JSON.stringify(result)).not.toContain(`${SECRET}\\n`);
  });

  it('a path outside home that does not contain it still works', async () => {
    expect(await t.call('cli_execute', { binary: 'ls', args: ['/usr'] })).toMatchObject({ ok: true, value: { exit_code: 0 } });
  });
});
