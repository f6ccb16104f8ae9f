import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

const SOURCE = ['function greet(name) {', '  return "hello " + name;', '}', '', 'greet("a");', 'greet("b");', ''].join('\n');

let work: string;
let t: ToolHarness;
const read = (path: string) => readFileSync(join(work, path), 'utf8');

beforeEach(async () => {
  const base = tempDir('forge-edit-');
  work = join(base, 'work');
  mkdirSync(join(base, 'outside'), { recursive: true });
  mkdirSync(work);
  writeFileSync(join(work, 'app.js'), SOURCE);
  writeFileSync(join(work, 'win.txt'), 'alpha\r\nbeta\r\ngamma\r\n');
  writeFileSync(join(base, 'outside', 'x.js'), 'greet("a");\n');
  symlinkSync(join(base, 'outside', 'x.js'), join(work, 'link.js'));
  t = await tools(['file_read', 'file_write', 'file_edit', 'atomic_edit'], { workDir: work });
});

describe('file_edit', () => {
  it('replaces a unique match and returns a unified diff with a hunk header', async () => {
    const value = await t.value<{ replacements: number; diff: string }>('file_edit', { path: 'app.js', old_string: '"hello "', new_string: '"hi "' });
    expect(value.replacements).toBe(1);
    expect(read('app.js')).toBe(SOURCE.replace('"hello "', '"hi "'));
    expect(value.diff).toContain('--- a/app.js\n+++ b/app.js\n');
    expect(value.diff).toMatch(/^@@ -1,5 \+1,5 @@$/m);
    expect(value.diff).toContain('-  return "hello " + name;\n+  return "hi " + name;');
  });

  it('refuses several matches, giving their lines, and leaves the file alone', async () => {
    const result = await t.call('file_edit', { path: 'app.js', old_string: 'greet("', new_string: 'hello("' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EDIT_AMBIGUOUS', message: expect.stringContaining('occurs 2 times') } });
    if (!result.ok) expect(result.error.message).toContain('lines 5, 6');
    expect(read('app.js')).toBe(SOURCE);
  });

  it('refuses 60,000 matches at once, giving the lines of the first ten (each counted from the start took 13 s)', async () => {
    writeFileSync(join(work, 'many.txt'), 'a\n'.repeat(60_000));
    const started = performance.now();
    for (const [tool, args] of [['file_edit', { path: 'many.txt', old_string: 'a', new_string: 'b' }], ['atomic_edit', { path: 'many.txt', edits: [{ old_string: 'a', new_string: 'b' }] }]] as const) {
      const result = await t.call(tool, args);
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EDIT_AMBIGUOUS', message: expect.stringMatching(/occurs 60000 times in .*many\.txt.* \(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …\)/) } });
    }
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("refuses a replace_all that would make the file larger than an edit may, writing nothing (530 a's, each a megabyte: 530 MB)", async () => {
    writeFileSync(join(work, 'small.txt'), 'a'.repeat(530));
    for (const [tool, args] of [['file_edit', { path: 'small.txt', old_string: 'a', new_string: 'x'.repeat(1_000_000), replace_all: true }], ['atomic_edit', { path: 'small.txt', edits: [{ old_string: 'a', new_string: 'x'.repeat(1_000_000), replace_all: true }] }]] as const) {
      expect(await t.call(tool, args)).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_TOO_LARGE', message: expect.stringContaining('530000000 characters long') } });
    }
    expect(read('small.txt')).toBe('a'.repeat(530));
    // Within the limit, the edit is made, and a diff past a megabyte is said to be too large to show.
    const grown = await t.value<{ replacements: number; diff: string }>('file_edit', { path: 'small.txt', old_string: 'a', new_string: 'x'.repeat(10_000), replace_all: true });
    expect(grown.replacements).toBe(530);
    expect(read('small.txt')).toHaveLength(5_300_000);
    expect(grown.diff).toMatch(/^--- a\/small\.txt\n\+\+\+ b\/small\.txt\n\(the diff is \d+ characters: too large to show; file_read shows the file\)\n$/);
  });

  it('replaces every match with replace_all', async () => {
    expect(await t.value('file_edit', { path: 'app.js', old_string: 'greet("', new_string: 'hello("', replace_all: true })).toMatchObject({ replacements: 2 });
    expect(read('app.js')).toContain('hello("a");\nhello("b");');
  });

  it('refuses no match, pointing at text that differs only in whitespace', async () => {
    const result = await t.call('file_edit', { path: 'app.js', old_string: 'return  "hello "   +\tname', new_string: 'x' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EDIT_NO_MATCH', hint: expect.stringContaining('line 2') } });
    expect(read('app.js')).toBe(SOURCE);
  });

  it('matches text written with \\n in a file with Windows line endings, and keeps them', async () => {
    await t.value('file_edit', { path: 'win.txt', old_string: 'alpha\nbeta', new_string: 'ALPHA\nBETA' });
    expect(read('win.txt')).toBe('ALPHA\r\nBETA\r\ngamma\r\n');
  });

  it('treats $ in the new text literally', async () => {
    await t.value('file_edit', { path: 'app.js', old_string: 'name;', new_string: "$& $1 $$;" });
    expect(read('app.js')).toContain('"hello " + $& $1 $$;');
  });

  it.each([
    [{ path: 'link.js', old_string: 'greet', new_string: 'x' }, 'FORGE_PATH_OUTSIDE'],
    [{ path: 'app.js', old_string: 'greet', new_string: 'greet' }, 'FORGE_EDIT_NOOP'],
    [{ path: 'nope.js', old_string: 'a', new_string: 'b' }, 'FORGE_FILE_NOT_FOUND'],
  ])('refuses %j with %s', async (args, code) => {
    expect(await t.call('file_edit', args)).toMatchObject({ ok: false, error: { code } });
  });
});

describe('atomic_edit', () => {
  it('applies several edits in order and writes once', async () => {
    const value = await t.value<{ edits: number; replacements: number; diff: string }>('atomic_edit', {
      path: 'app.js',
      edits: [
        { old_string: 'function greet(name)', new_string: 'function welcome(name)' },
        { old_string: 'greet("', new_string: 'welcome("', replace_all: true },
        { old_string: 'welcome("b")', new_string: 'welcome("c")' },
      ],
    });
    expect(value).toMatchObject({ edits: 3, replacements: 4 });
    expect(read('app.js')).toBe(SOURCE.replace('function greet', 'function welcome').replace('greet("a")', 'welcome("a")').replace('greet("b")', 'welcome("c")'));
    expect(value.diff).toContain('+function welcome(name) {');
  });

  it('writes nothing when one edit fails, and names it', async () => {
    const result = await t.call('atomic_edit', {
      path: 'app.js',
      edits: [
        { old_string: 'function greet', new_string: 'function welcome' },
        { old_string: 'not in the file', new_string: 'x' },
      ],
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EDIT_NO_MATCH', message: expect.stringMatching(/^edit 2 of 2: .*no edit was written/) } });
    expect(read('app.js')).toBe(SOURCE);
  });

  it('goes through file_read and file_write (one call each, one level deeper)', async () => {
    const calls: { name: string; depth: number }[] = [];
    t.registry.onCall((e) => calls.push({ name: e.name, depth: e.depth }));
    await t.value('atomic_edit', { path: 'app.js', edits: [{ old_string: 'hello', new_string: 'hey' }] });
    expect(calls).toEqual([
      { name: 'file_read', depth: 1 },
      { name: 'file_write', depth: 1 },
      { name: 'atomic_edit', depth: 0 },
    ]);
  });

  it('is bound by the path guard of the tools it calls', async () => {
    const result = await t.call('atomic_edit', { path: 'link.js', edits: [{ old_string: 'greet', new_string: 'x' }] });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });

  it('reaches only the tools it declares', async () => {
    const spec = t.registry.get('atomic_edit')!;
    expect(spec.composedOf).toEqual(['file_read', 'file_write']);
    expect(spec.singleConfirmation).toBe(true);
    // Without file_write in the agent, the edit fails cleanly and nothing is written.
    const readOnly = await tools(['file_read', 'atomic_edit'], { workDir: work });
    const result = await readOnly.call('atomic_edit', { path: 'app.js', edits: [{ old_string: 'hello', new_string: 'hey' }] });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: expect.stringContaining('file_write') } });
    expect(read('app.js')).toBe(SOURCE);
  });
});
