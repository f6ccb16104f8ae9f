/**
 * The count of patterns a glob's braces expand to (runtime/tools/code-agent/brace-expansions.ts), held to
 * what fast-glob's own expansion (micromatch's braces, with fast-glob's options) makes, and glob_search's
 * refusal of a pattern that expands past its limit: 110 characters of {a,b} made 4 million patterns and
 * exhausted the agent's memory.
 */
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { braceExpansions } from '../../../../runtime/tools/code-agent/brace-expansions.ts';
import { globCostProblem } from '../../../../runtime/tools/code-agent/glob-cost.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools } from '../../../helpers/tools.ts';

// fast-glob's own expansion, as it calls it (node_modules/fast-glob/out/utils/pattern.js), to hold the count to.
const micromatch = createRequire(createRequire(import.meta.url).resolve('fast-glob'))('micromatch') as { braces(pattern: string, options: object): string[] };
const expanded = (pattern: string) => micromatch.braces(pattern, { expand: true, nodupes: true, keepEscaping: true }).length;

describe('braceExpansions', () => {
  it.each([
    '*.ts',
    '*.{md,txt}',
    'src/{a,b}/{c,d,e}/*.ts',
    '{a,{b,c}}/x',
    '{a,b{c,d}}/{e,f}',
    'x{1..9}',
    'x{1..10..3}',
    'x{a..e}',
    'x{0..-4}',
    '{a,b}{1..3}{x,y,z}',
    'no{brace',
    'lone}brace',
    '{single}',
    '\\{a,b\\}',
    '{a,b\\,c}',
    '**/{src,lib}/**/*.{ts,tsx,js}',
  ])('counts %s as fast-glob expands it', (pattern) => {
    expect(braceExpansions(pattern, 10_000)).toBe(expanded(pattern));
  });

  it('stops counting past the cap, without expanding (2^200 patterns)', () => {
    expect(braceExpansions('{a,b}'.repeat(200), 1024)).toBe(1025);
    expect(braceExpansions('x{1..100000000}', 1024)).toBe(1025);
    // Nested past 64: refused as past any cap, without recursing 5,000 deep.
    expect(braceExpansions('{'.repeat(5000) + 'a,b' + '}'.repeat(5000), 1024)).toBe(1025);
    expect(braceExpansions('{'.repeat(60) + 'a,b' + '}'.repeat(60), 1024)).toBe(expanded('{'.repeat(60) + 'a,b' + '}'.repeat(60)));
  });
});

describe('globCostProblem', () => {
  it.each(['*.ts', '**/*.{ts,tsx}', 'src/**/test_*.py', '*.test.*', 'a?b*c*', '**/**/x', '\\*\\*\\*\\*x'])('lets %s through', (glob) => {
    expect(globCostProblem(glob)).toBeUndefined();
  });

  it.each([
    ['*a*a*a*b', /more than 3 wildcards \(\* or \?\) in one segment \("\*a\*a\*a\*b"\)/],
    ['**/*a*a*a*a*a*b', /in one segment/],
    ['x?y?z?w?', /in one segment/],
    ['{a,b}'.repeat(11), /expands to more than 1024 patterns/],
  ])('refuses %s', (glob, why) => {
    expect(globCostProblem(glob)).toMatch(why);
  });
});

describe("glob_search's brace limit", () => {
  it('refuses a pattern that expands past 1,024 patterns before fast-glob expands it, and runs one within', async () => {
    const work = tempDir();
    mkdirSync(join(work, 'src'));
    writeFileSync(join(work, 'src', 'a.ts'), '');
    writeFileSync(join(work, 'src', 'b.md'), '');
    const t = await tools(['glob_search'], { workDir: work });
    const started = performance.now();
    const refused = await t.call('glob_search', { pattern: '{a,b}'.repeat(22) });
    expect(refused).toMatchObject({ ok: false, error: { code: 'FORGE_GLOB_PATTERN', message: expect.stringContaining('expands to more than 1024 patterns') } });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await t.call('glob_search', { pattern: 'x{1..2000}' })).toMatchObject({ ok: false, error: { code: 'FORGE_GLOB_PATTERN' } });
    const found = (await t.value('glob_search', { pattern: 'src/*.{ts,md}' })) as { files: { path: string }[] };
    expect(found.files.map((f) => f.path).sort()).toEqual(['src/a.ts', 'src/b.md']);
  });

  it('refuses wildcards that backtrack against a long name before matching, in glob_search and in grep_search include/exclude', async () => {
    const work = tempDir();
    // A name a caller can make with file_write: *a*a*a*a*b against it backtracked for 35 s on the agent's thread.
    writeFileSync(join(work, 'a'.repeat(240)), 'hello\n');
    const t = await tools(['glob_search', 'grep_search'], { workDir: work });
    const started = performance.now();
    expect(await t.call('glob_search', { pattern: '*a*a*a*a*b' })).toMatchObject({ ok: false, error: { code: 'FORGE_GLOB_PATTERN', message: expect.stringContaining('more than 3 wildcards') } });
    for (const key of ['include', 'exclude']) {
      expect(await t.call('grep_search', { pattern: 'hello', [key]: ['**/*a*a*a*a*a*b'] })).toMatchObject({ ok: false, error: { code: 'FORGE_GLOB_PATTERN', message: expect.stringContaining('more than 3 wildcards') } });
    }
    expect(performance.now() - started).toBeLessThan(5_000);
    // Within the limit, both match as before.
    expect(((await t.value('glob_search', { pattern: '*a*b*' })) as { files: unknown[] }).files).toEqual([]);
    expect(((await t.value('glob_search', { pattern: 'a*a*a' })) as { files: unknown[] }).files).toHaveLength(1);
  });
});
