/**
 * Option injection: a value that starts a program's argument and itself starts with "-" is read by the
 * program as an option (`sort {file}` with file "-opwned" writes a file; `du -sh {path}` with
 * "--files0-from=..." reads one). Escaping cannot stop it — the shell passes the word on faithfully — so
 * such a value is refused wherever a program would read it as an option, in every kind of command a YAML
 * tool runs, and left alone wherever it cannot be one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readYamlTool } from '../../../../runtime/tools/yaml/read-definition.ts';
import { createYamlTool, yamlToolSpec } from '../../../../runtime/tools/yaml/yaml-tool.ts';
import { tempDir } from '../../../helpers/project.ts';
import { yamlRegistry } from './helpers.ts';

const parameters = { v: { type: 'string', description: 'A value.' } };

/** Runs a one-parameter tool with the value; the result, and whether the attack's file was written. */
async function call(tool: Record<string, unknown>, value: unknown, params: Record<string, unknown> = parameters) {
  const workDir = tempDir('forge-option-');
  const registry = yamlRegistry(workDir, { t: { description: 'A tool.', parameters: params, ...tool } });
  const result = await registry.execute('t', { v: value });
  return { result, pwned: existsSync(join(workDir, 'pwned')) };
}

/** Where the value starts an argument of sort, which `-opwned` makes write the file "pwned". */
const OPTION_PLACES: Record<string, Record<string, unknown>> = {
  'bash, bare': { bash: 'sort {v} < /dev/null' },
  "bash, in '...'": { bash: "sort '{v}' < /dev/null" },
  'bash, in "..."': { bash: 'sort "{v}" < /dev/null' },
  "bash, in $'...'": { bash: "sort $'{v}' < /dev/null" },
  'bash, after empty quotes': { bash: "sort ''{v} < /dev/null" },
  'bash, after an option': { bash: 'sort -s {v} < /dev/null' },
  'bash, after an operand (GNU tools read options anywhere)': { bash: 'sort /dev/null {v}' },
  'bash, inside $(...)': { bash: 'x="$(sort {v} < /dev/null)"' },
  'bash, after a pipe': { bash: 'true | sort {v} < /dev/null' },
  'bash, after ; in a command that had --': { bash: 'ls -- . > /dev/null; sort {v} < /dev/null' },
  'bash, after an assignment and a keyword': { bash: 'if LC_ALL=C sort {v} < /dev/null; then :; fi' },
  'bash, after an input redirection': { bash: 'sort < /dev/null {v}' },
  'bash, after a here-document start': { bash: 'sort <<EOF {v}\nEOF' },
  'sh, bare': { sh: 'sort {v} < /dev/null' },
  'script: with shell: bash {0}': { script: 'sort "{v}" < /dev/null', shell: 'bash {0}' },
  'run:, one string': { run: 'sort {v} /dev/null' },
  'run:, a list': { run: ['sort', '{v}', '/dev/null'] },
};

describe('a value that would be read as an option', () => {
  it.each(Object.entries(OPTION_PLACES))('is refused: %s', async (_place, tool) => {
    const { result, pwned } = await call(tool, '-opwned');
    expect(pwned).toBe(false);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('FORGE_YAML_VALUE');
      expect(result.error.message).toMatch(/\{v\} starts with "-" \("-opwned"\), so "sort" would read it as an option/);
      expect(result.error.message).toMatch(/-- before the placeholder/);
    }
  });

  it('is refused as any item of an array standing bare (each item is an argument)', async () => {
    const { result, pwned } = await call({ bash: 'sort {v} < /dev/null' }, ['/dev/null', '-opwned'], { v: { type: 'array', items: { type: 'string' } } });
    expect(pwned).toBe(false);
    expect(result.ok).toBe(false);
  });

  it('is refused when the program itself is a value (`{program} {v}`)', async () => {
    const { result } = await call({ bash: '{p} {v}' }, '-x', { v: { type: 'string' }, p: { type: 'string', default: 'true' } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(/the program would read it as an option/);
  });

  it('is refused in a later step too (a step output starting an argument)', async () => {
    const { result, pwned } = await call({ steps: [{ name: 'a', bash: 'printf %s {v}' }, { name: 'b', bash: 'sort {a.output} < /dev/null' }] }, '-opwned');
    expect(pwned).toBe(false);
    expect(result.ok).toBe(false);
  });
});

/** Where no program reads the value as an option: it arrives as itself. */
const VALUE_PLACES: Record<string, { tool: Record<string, unknown>; prints: (v: string) => string }> = {
  'after --': { tool: { bash: "printf '%s\\n' -- {v} | tail -n 1" }, prints: (v) => `${v}\n` },
  'after -- in run:': { tool: { run: ['python3', '-c', 'import sys; print(sys.argv[-1])', '--', '{v}'] }, prints: (v) => `${v}\n` },
  "after printf's format": { tool: { bash: "printf '%s' {v}" }, prints: (v) => v },
  "after printf's format in run:": { tool: { run: ['printf', '%s', '{v}'] }, prints: (v) => v },
  "after echo's first operand": { tool: { bash: 'echo x {v}' }, prints: (v) => `x ${v}\n` },
  'glued to an option': { tool: { bash: 'printf "%s" --value={v}' }, prints: (v) => `--value=${v}` },
  'after ./': { tool: { bash: 'printf "%s" ./{v}' }, prints: (v) => `./${v}` },
  'as a redirection target': { tool: { bash: 'printf ok > {v} && cat -- {v}' }, prints: () => 'ok' },
  'as a here-string': { tool: { bash: 'cat <<< {v}' }, prints: (v) => `${v}\n` },
  'in a here-document': { tool: { bash: 'cat <<EOF\n{v}\nEOF' }, prints: (v) => `${v}\n` },
  'as a case word': { tool: { bash: 'case {v} in -*) echo dash;; *) echo other;; esac' }, prints: () => 'dash\n' },
  'in [[ ]]': { tool: { bash: '[[ {v} == -* ]] && echo dash' }, prints: () => 'dash\n' },
  'in a for list': { tool: { bash: 'for w in {v}; do printf "%s" "$w"; done' }, prints: (v) => v },
  'assigned to a variable': { tool: { bash: 'w={v}; printf "%s" "$w"' }, prints: (v) => v },
  'in a python: step': { tool: { python: 'print({v})' }, prints: (v) => `${v}\n` },
  'inside a word': { tool: { run: ['printf', '%s', 'x{v}'] }, prints: (v) => `x${v}` },
};

describe('a value starting with "-" where no program reads options', () => {
  it.each(Object.entries(VALUE_PLACES))('arrives as itself: %s', async (_place, { tool, prints }) => {
    const { result } = await call({ ...tool, output: '{main.stdout}' }, '-opwned');
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect(result.value).toBe(prints('-opwned'));
  });

  it('a number is a value, not an option: `head -n {n}` with -1', async () => {
    const { result } = await call({ bash: 'printf "a\\nb\\n" | head -n {v}', output: '{main.stdout}' }, -1, { v: { type: 'integer' } });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect(result.value).toBe('a\n');
  });

  it("a boolean's flag: is the author's option, not a value", async () => {
    const { result } = await call({ bash: 'printf "b\\na\\n" | sort {v}', output: '{main.stdout}' }, true, { v: { type: 'boolean', flag: '-r' } });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect(result.value).toBe('b\na\n');
  });

  it('{RAW:...} is inserted as the author asked', async () => {
    const { result } = await call({ bash: 'printf "b\\na\\n" | sort {RAW:v}', output: '{main.stdout}' }, '-r');
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect(result.value).toBe('b\na\n');
  });
});

describe('the option check', () => {
  it("resolves a run: value once: a composition's budget of resolved characters counts it once", async () => {
    const { definition } = readYamlTool(parse("description: T.\nparameters: { v: { type: string } }\nrun: [python3, -c, 'import sys; print(len(sys.argv[1]))', '{v}']\n"), 't');
    const tool = createYamlTool(yamlToolSpec(definition!, undefined), definition!, { workDir: tempDir('forge-option-'), maxResolvedChars: 1000 });
    const result = await tool.execute({ v: 'a'.repeat(600) }, { signal: new AbortController().signal } as never);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expect(String(result.value).trim()).toBe('600');
  });
});
