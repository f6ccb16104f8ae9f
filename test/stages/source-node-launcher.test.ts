/**
 * A TS tool run from sources is compiled once per content of the files it is made of: a file
 * touched, or checked out again with the same bytes, keeps the compiled code; a changed helper
 * is compiled in.
 */
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const TOOL = `/**\n * Tool: greet\n * Description: Greets someone.\n * Tags: read\n *\n * Input:\n *   name (str): Who.\n */\nimport { greeting } from './lib/greeting.ts';\nexport function execute(args: { name: string }) {\n  return { text: greeting(args.name) };\n}\n`;
const helper = (word: string) => `export function greeting(name: string): string {\n  return '${word}, ' + name;\n}\n`;
/** A program that is not esbuild: any compile (or syntax check) fails under it. */
const NO_ESBUILD = { ESBUILD_BINARY_PATH: '/bin/false' };

describe('a TS tool compiled from sources', () => {
  it('keeps its compiled code when its files are touched with the same bytes, and compiles a changed helper in', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': TOOL, 'tools/lib/greeting.ts': helper('Hello') });
    const run = async (env?: NodeJS.ProcessEnv) => {
      const result = await forge(['tool', 'run', 'greet', '--json', '--param', 'name=Ada'], dir, env);
      expect(result.stderr).toBe('');
      return JSON.parse(result.stdout) as { ok: boolean; value?: { text: string } };
    };
    expect(await run()).toMatchObject({ ok: true, value: { text: 'Hello, Ada' } });

    // Touched: new mtimes, the same bytes (a checkout, an editor's save without a change). Twice: the
    // second run judges by the stamps the first one took again.
    const later = new Date(Date.now() + 60_000);
    for (const file of ['tools/greet.ts', 'tools/lib/greeting.ts']) utimesSync(join(dir, file), later, later);
    expect(await run(NO_ESBUILD)).toMatchObject({ ok: true, value: { text: 'Hello, Ada' } });
    expect(await run(NO_ESBUILD)).toMatchObject({ ok: true, value: { text: 'Hello, Ada' } });

    // The helper's bytes changed (its size kept): compiled again, with the new text.
    writeFileSync(join(dir, 'tools', 'lib', 'greeting.ts'), helper('Howdy'));
    expect(await run()).toMatchObject({ ok: true, value: { text: 'Howdy, Ada' } });
  });
});
