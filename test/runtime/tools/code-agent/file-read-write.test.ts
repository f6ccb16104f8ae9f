import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let work: string;
let outside: string;
let t: ToolHarness;

beforeEach(async () => {
  const base = tempDir('forge-files-');
  work = join(base, 'work');
  outside = join(base, 'outside');
  mkdirSync(join(work, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
  writeFileSync(join(work, 'src', 'main.ts'), 'line 1\nline 2\nline 3\nline 4\nline 5\n');
  writeFileSync(join(work, 'crlf.txt'), 'one\r\ntwo\r\n');
  writeFileSync(join(work, 'blob.bin'), Buffer.from([1, 2, 0, 3]));
  symlinkSync(join(outside, 'secret.txt'), join(work, 'leak.txt'));
  symlinkSync(outside, join(work, 'outdir'));
  t = await tools(['file_read', 'file_write'], { workDir: work });
});

describe('file_read', () => {
  it('reads a whole file exactly', async () => {
    const value = await t.value('file_read', { path: 'src/main.ts' });
    expect(value).toMatchObject({ path: 'src/main.ts', type: 'file', content: 'line 1\nline 2\nline 3\nline 4\nline 5\n', start_line: 1, end_line: 5, total_lines: 5, truncated: false });
  });

  it('pages with offset and limit, saying more lines follow', async () => {
    expect(await t.value('file_read', { path: 'src/main.ts', offset: 2, limit: 2 })).toMatchObject({ content: 'line 2\nline 3\n', start_line: 2, end_line: 3, truncated: true });
    expect(await t.value('file_read', { path: 'src/main.ts', offset: 5 })).toMatchObject({ content: 'line 5\n', truncated: false });
  });

  it('keeps Windows line endings', async () => {
    expect((await t.value('file_read', { path: 'crlf.txt' })).content).toBe('one\r\ntwo\r\n');
  });

  it('lists a directory', async () => {
    const value = await t.value<{ entries: { name: string; type: string; size?: number }[] }>('file_read', { path: '.' });
    expect(value.entries).toEqual([
      { name: 'blob.bin', type: 'file', size: 4 },
      { name: 'crlf.txt', type: 'file', size: 10 },
      { name: 'leak.txt', type: 'symlink' },
      { name: 'outdir', type: 'symlink' },
      { name: 'src', type: 'directory' },
    ]);
  });

  it.each([
    ['missing.txt', 'FORGE_FILE_NOT_FOUND'],
    ['blob.bin', 'FORGE_FILE_BINARY'],
    ['leak.txt', 'FORGE_PATH_OUTSIDE'],
    ['outdir/secret.txt', 'FORGE_PATH_OUTSIDE'],
    ['../outside/secret.txt', 'FORGE_PATH_OUTSIDE'],
  ])('refuses %s with %s', async (path, code) => {
    const result = await t.call('file_read', { path });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe(code);
  });

  it('refuses an offset past the end, naming the line count', async () => {
    const result = await t.call('file_read', { path: 'src/main.ts', offset: 9 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_RANGE', message: expect.stringContaining('5 lines') } });
  });
});

describe('file_write', () => {
  it('creates a file and its parent directories, and reports it', async () => {
    expect(await t.value('file_write', { path: 'new/deep/file.txt', content: 'héllo' })).toEqual({ path: 'new/deep/file.txt', action: 'created', bytes: 6 });
    expect(readFileSync(join(work, 'new/deep/file.txt'), 'utf8')).toBe('héllo');
  });

  it('replaces an existing file, keeping its permissions', async () => {
    chmodSync(join(work, 'src/main.ts'), 0o640);
    expect(await t.value('file_write', { path: 'src/main.ts', content: 'x' })).toEqual({ path: 'src/main.ts', action: 'updated', bytes: 1 });
    expect(readFileSync(join(work, 'src/main.ts'), 'utf8')).toBe('x');
    expect(statSync(join(work, 'src/main.ts')).mode & 0o777).toBe(0o640);
  });

  it.each([
    ['leak.txt', 'through a symlink to a file outside'],
    ['outdir/new.txt', 'into a symlinked directory outside'],
    ['../outside/new.txt', 'with ..'],
  ])('refuses to write %s (%s) and leaves the outside untouched', async (path) => {
    const result = await t.call('file_write', { path, content: 'pwned' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refuses to write over a directory', async () => {
    expect(await t.call('file_write', { path: 'src', content: 'x' })).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_IS_DIRECTORY' } });
  });
});
