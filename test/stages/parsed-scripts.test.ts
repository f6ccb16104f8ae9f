import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParsedScripts } from '../../stages/parsed-scripts.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const tool = (body: string) => `/**\n * Tool: shout\n * Description: Shouts a word.\n * Tags: read\n *\n * Input:\n *   word (str): The word.\n */\nexport function execute(args: { word: string }) {\n${body}\n}\n`;
const SHOUT = tool('  return { loud: args.word.toUpperCase() };');
/**
 * esbuild's API runs its service from this path: a program that is not esbuild makes any use of
 * esbuild fail (a path that does not exist is ignored, with a line on stderr, for its own binary).
 */
const NO_ESBUILD = { ESBUILD_BINARY_PATH: '/bin/false' };

describe('the TS/JS syntax check of forge tool run and forge validate', () => {
  it('starts no esbuild for a tool whose text it parsed and compiled before, and parses a changed text again', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.ts': SHOUT });
    const first = await forge(['tool', 'run', 'shout', '--json', '--param', 'word=hi'], dir);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, value: { loud: 'HI' } });

    // The same text: checked and compiled before, so nothing asks esbuild (which would fail to start).
    const again = await forge(['tool', 'run', 'shout', '--json', '--param', 'word=hey'], dir, NO_ESBUILD);
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, value: { loud: 'HEY' } });
    const validated = await forge(['validate', '--json'], dir, NO_ESBUILD);
    expect(validated.stderr).toBe('');
    expect(validated.code).toBe(0);

    // A changed text is parsed again: its syntax error is reported, by validate and before a run.
    writeFileSync(join(dir, 'tools', 'shout.ts'), tool('  return { loud: args.word.toUpperCase( };'));
    const broken = await forge(['validate', '--json'], dir);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout).errors).toEqual([expect.objectContaining({ code: 'FORGE_SYNTAX', file: 'tools/shout.ts', line: 10 })]);
    const run = await forge(['tool', 'run', 'shout', '--param', 'word=hi'], dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('FORGE_SYNTAX');

    // Back to the text checked before: known again, by its content (a new mtime or not).
    writeFileSync(join(dir, 'tools', 'shout.ts'), SHOUT);
    const restored = await forge(['validate', '--json'], dir, NO_ESBUILD);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
  });

  it('keys a parse by the text and the loader, and keeps what it learned for the next run', () => {
    const root = tempDir();
    const parsed = ParsedScripts.open(root);
    const text = Buffer.from('export const a = 1;\n');
    const key = parsed.key(text, 'ts');
    expect(parsed.key(text, 'js')).not.toBe(key);
    expect(parsed.key(Buffer.from('export const a = 2;\n'), 'ts')).not.toBe(key);
    // The same text under another esbuild is another key.
    expect(ParsedScripts.open(root, '0.0.1').key(text, 'ts')).not.toBe(key);
    expect(parsed.has(key)).toBe(false);
    parsed.add(key);
    parsed.save();
    expect(ParsedScripts.open(root).has(key)).toBe(true);
  });

  it('starts from nothing when its file is damaged or from another format, and writes a good one', () => {
    const root = tempDir();
    const first = ParsedScripts.open(root);
    const key = first.key(Buffer.from('let x = 1;\n'), 'js');
    first.add(key);
    first.save();
    const file = join(root, '.forge', 'cache', 'parsed-scripts.json');
    for (const damaged of ['{"format": 1, "parsed": ', JSON.stringify({ format: 0, parsed: [key] }), 'null']) {
      writeFileSync(file, damaged);
      const reopened = ParsedScripts.open(root);
      expect(reopened.has(key)).toBe(false);
      reopened.add(key);
      reopened.save();
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ format: 1, parsed: [key] });
    }
  });
});
