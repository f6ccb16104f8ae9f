/**
 * Builtin arguments are typed from their schemas: the type checks in
 * typed-args.types.ts pass, and a tool whose schema changes without its code
 * following fails to compile. Both run the project's own TypeScript compiler.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runProcess, tempDir } from '../../../helpers/project.ts';

const TSC = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const BUILTIN_DIR = join(repoRoot, 'runtime', 'tools', 'builtin');

/** Compiles just `files` with the project's compiler options; returns tsc's diagnostics, one per line. */
async function typeErrors(files: string[]): Promise<string[]> {
  const dir = tempDir('forge-typed-args-');
  const config = join(dir, 'tsconfig.json');
  writeFileSync(config, JSON.stringify({ extends: join(repoRoot, 'tsconfig.json'), compilerOptions: { typeRoots: [join(repoRoot, 'node_modules', '@types')] }, files, include: [] }));
  const result = await runProcess(process.execPath, [TSC, '-p', config, '--pretty', 'false'], { cwd: dir });
  const lines = (result.stdout + result.stderr).split('\n').filter((l) => /error TS\d+/.test(l));
  if (result.code !== 0) expect(lines.length, result.stdout + result.stderr).toBeGreaterThan(0);
  return lines;
}

/** math_calculate's source with its imports made absolute and `edit` applied, written where tsc can compile it. */
function mathCalculateWith(edit: (source: string) => string): string {
  const source = readFileSync(join(BUILTIN_DIR, 'math-calculate.ts'), 'utf8').replace(/from '\.\.?\/([^']+)'/g, (match, path: string) =>
    `from '${join(BUILTIN_DIR, match.includes("'../") ? '..' : '.', path)}'`,
  );
  const changed = edit(source);
  expect(changed).not.toBe(source);
  const dir = tempDir('forge-typed-args-');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
  const file = join(dir, 'math-calculate.ts');
  writeFileSync(file, changed);
  return file;
}

describe('builtin arguments typed from their schemas', () => {
  it('passes the type-level checks: schema types, unknown properties refused, defaulted properties present', async () => {
    expect(await typeErrors([join(repoRoot, 'test', 'runtime', 'tools', 'builtin', 'typed-args.types.ts')])).toEqual([]);
  }, 120_000);

  it('compiles a shipped tool as written, and fails it when its schema changes and the code does not follow', async () => {
    const unchanged = mathCalculateWith((s) => s.replace("'The expression, e.g.", "'An expression, e.g."));
    const retyped = mathCalculateWith((s) => s.replace("expression: { type: 'string'", "expression: { type: 'number'"));
    const renamed = mathCalculateWith((s) => s.replace("required: ['expression']", "required: ['formula']").replace("expression: { type: 'string'", "formula: { type: 'string'"));
    expect(await typeErrors([unchanged])).toEqual([]);
    const retypedErrors = await typeErrors([retyped]);
    expect(retypedErrors.length).toBeGreaterThan(0);
    expect(retypedErrors.join('\n')).toMatch(/math-calculate\.ts.*'number' is not assignable to parameter of type 'string'/);
    expect((await typeErrors([renamed])).join('\n')).toMatch(/math-calculate\.ts.*Property 'expression' does not exist/);
  }, 120_000);
});
