/**
 * Names someone else writes — a docstring's type, a YAML condition's word, a
 * program cli_execute runs, a field a YAML template reads, a local $ref in an
 * adapter's schema, a declared Python package,
 * a FORGE_HTTP_LIMITS key, a tool step's argument, a --param — looked up in Forge's tables: a name that every
 * object answers (constructor, toString, __proto__) is an unknown name, at
 * every front, never a crash and never a silent yes.
 */
import { describe, expect, it } from 'vitest';
import { parseParams } from '../../cli/param-values.ts';
import { checkArguments } from '../../runtime/guard/command-guard.ts';
import { httpLimits } from '../../runtime/server/http-limits.ts';
import { extractPythonDocstring } from '../../runtime/tools/custom/docstring-source.ts';
import { parseDocstring } from '../../runtime/tools/custom/docstring.ts';
import { guessedImportNames } from '../../runtime/tools/custom/python-requirement.ts';
import { readYamlTool } from '../../runtime/tools/yaml/read-definition.ts';
import { stepArgsProblems } from '../../runtime/tools/yaml/step-args.ts';
import { ownValue } from '../../runtime/own-value.ts';
import { RunValues } from '../../runtime/tools/yaml/run-values.ts';
import type { Reference } from '../../runtime/tools/yaml/template.ts';
import { normalizeExternalSchema } from '../../stages/adapters/external-schema.ts';
import { problemsOf } from './tools/yaml/helpers.ts';

const INHERITED = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__proto__', '__defineGetter__'];

describe('ownValue', () => {
  it("answers a table's own entries only", () => {
    const table: Record<string, number> = { one: 1 };
    expect(ownValue(table, 'one')).toBe(1);
    for (const name of INHERITED) expect(ownValue(table, name)).toBeUndefined();
  });
});

describe.each(INHERITED)('a name every object has (%s)', (name) => {
  it("is an unknown word in a YAML step's when: condition", () => {
    const problems = problemsOf({ description: 'A tool.', parameters: { a: { type: 'string' } }, steps: [{ name: 's', bash: 'true', when: `{a} ${name} 'b'` }] });
    expect(problems).toMatchObject([{ code: 'FORGE_YAML_CONDITION', message: expect.stringContaining(`unknown word "${name.match(/^[A-Za-z_]+/)![0]}"`) }]);
  });

  it("is a program whose glued option values are checked as paths, as any program's are (cut's -d is a separator)", () => {
    const context = (program: string) => ({ workDir: '/home/agent/work', home: '/home/agent', binary: { name: program, path: `/usr/bin/${program}`, real: `/usr/bin/${program}` } });
    expect(checkArguments(['-d~/.ssh/id_rsa'], context('cut'))).toBeUndefined();
    expect(checkArguments(['-d~/.ssh/id_rsa'], context(name))).toMatchObject({ code: 'FORGE_CLI_PATH' });
  });

  it("is an argument a tool step passes that the called tool does not take, and a required one it does not pass", () => {
    const { definition } = readYamlTool({ description: 'A tool.', steps: [{ name: 's', tool: 'inner', args: { [name]: 1 } }] }, 'outer');
    const takes = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };
    const needs = { type: 'object', properties: { [name]: { type: 'string' } }, required: [name], additionalProperties: false };
    // Those two, and nothing else (the inherited name is not checked as a value the schema has).
    expect(stepArgsProblems(definition!, () => takes).map((p) => p.message)).toEqual([`step "s" passes "${name}", which "inner" does not take`, 'step "s" does not pass "text", which "inner" needs']);
    const { definition: passesNothing } = readYamlTool({ description: 'A tool.', steps: [{ name: 's', tool: 'inner', args: {} }] }, 'outer');
    expect(stepArgsProblems(passesNothing!, () => needs).map((p) => p.message)).toEqual([`step "s" does not pass "${name}", which "inner" needs`]);
  });

  it('is an argument --param passes as text, for the tool\'s schema to refuse', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } } };
    const args = parseParams([`${name}=[1]`, 'n=2'], schema);
    expect(Object.keys(args)).toEqual([name, 'n']);
    // As any name the schema does not have.
    expect(Object.getOwnPropertyDescriptor(args, name)?.value).toEqual(parseParams(['other=[1]'], schema).other);
    expect(args.n).toBe(2);
  });

  it("is no field a YAML template reads from an argument or a step's output ({a.constructor} is missing, not Object)", () => {
    const values = new RunValues({ a: { b: 1 }, list: [1, 2] }, []);
    values.record('s', { status: 'ok', output: { b: 1 }, stdout: '{"b":1}', stderr: '', exitCode: 0 });
    const read = (text: string) => values.resolve({ root: text.split('.')[0], path: text.split('.').slice(1), text } as Reference);
    for (const ref of [`a.${name}`, `input.${name}`, `s.output.${name}`]) expect(read(ref)).toBeUndefined();
    // Own fields still read, an array's length too.
    expect([read('a.b'), read('s.output.b'), read('list.length'), read('list.1')]).toEqual([1, 1, 2, 2]);
  });

  it("is no local $ref target in an adapter's schema: the ref is unresolved, not a function", () => {
    const normalized = normalizeExternalSchema({ type: 'object', properties: { x: { $ref: `#/${name}` } } }) as { properties: { x: unknown } };
    expect(normalized.properties.x).toEqual({ description: '(a recursive structure: any value)' });
  });

  it('is a FORGE_HTTP_LIMITS key that changes nothing', () => {
    expect(httpLimits({}, { FORGE_HTTP_LIMITS: `${name}=5` })).toEqual(httpLimits({}, {}));
  });
});

/**
 * Fronts that lower-case a name before the lookup: only the names every object has that are lower case
 * already (constructor, __proto__) reach the table as such. (The studio's asset lookup, mended with the rest,
 * has no test here: its file read failed on such a name before as well, and the answer was the same.)
 */
describe.each(INHERITED.filter((name) => name === name.toLowerCase()))('a lower-case name every object has (%s)', (name) => {
  it('is an unknown type in a docstring, at its place', () => {
    const extracted = extractPythonDocstring(`"""\nTool: t\nDescription: d\nInput:\n  x (${name}): X.\n"""\n`);
    if (extracted.kind !== 'found') throw new Error(extracted.kind);
    const { diagnostics } = parseDocstring(extracted.docstring, 'tools/t.py');
    expect(diagnostics).toMatchObject([{ code: 'FORGE_DOCSTRING_TYPE', line: 5, column: 6 }]);
  });
});

describe('a Python package named constructor', () => {
  it('has import names guessed from its own name (names are normalized first: constructor is the one inherited name that survives)', () => {
    expect(guessedImportNames('constructor')).toEqual(['constructor']);
  });
});
