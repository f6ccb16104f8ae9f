import { describe, expect, it } from 'vitest';
import { definesExecute, extractPythonDocstring, extractScriptDocstring, scriptToolProblem } from '../../../../runtime/tools/custom/docstring-source.ts';
import { parseDocstring } from '../../../../runtime/tools/custom/docstring.ts';
import { checkArguments, createAjv } from '../../../../runtime/tools/validation.ts';

// The build does not compile docstring schemas again (stages/check-schemas.ts):
// every construct the grammar can produce is compiled here instead.
const ajv = createAjv({ useDefaults: true });

/** Parses a Python module whose docstring is `body` (the docstring starts on line 2 of the file). */
function parsePy(body: string) {
  const source = `"""\n${body}\n"""\n`;
  const extracted = extractPythonDocstring(source);
  if (extracted.kind !== 'found') throw new Error(`no docstring: ${extracted.kind}`);
  return parseDocstring(extracted.docstring, 'tools/t.py');
}

const WEATHER = `Tool: weather_lookup
Description: Current weather for a city.
  Continues on an indented line.
Category: custom
Tags: read, network
Timeout: 10s

Input:
  city (str): City name.
  units (str, optional): "metric" or "imperial". Default: metric.
  days (int, default=1): Forecast days.

Output:
  summary (str): One-line summary.`;

describe('parseDocstring: the grammar', () => {
  it('takes trailing # comments on fields that hold names, durations or yes/no; a description keeps its #', () => {
    const { tool, diagnostics } = parsePy(`Tool: commented        # the tool's name
Description: Closes issue #12 for good.
Category: dev           # development only
Tags: read, network     # read / write / run drive approval
  write                 # continues the list
Timeout: 10s            # ms, s or m`);
    expect(diagnostics).toEqual([]);
    expect(tool).toMatchObject({ name: 'commented', description: 'Closes issue #12 for good.', category: 'dev', tags: ['read', 'network', 'write'], timeoutMs: 10_000 });
  });

  it('parses every field of the handbook example', () => {
    const { tool, diagnostics } = parsePy(WEATHER);
    expect(diagnostics).toEqual([]);
    expect(tool).toMatchObject({
      name: 'weather_lookup',
      description: 'Current weather for a city. Continues on an indented line.',
      category: 'custom',
      tags: ['read', 'network'],
      timeoutMs: 10_000,
      nameAt: { line: 2, column: 7, lineText: 'Tool: weather_lookup' },
    });
    expect(tool!.inputSchema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name.' },
        units: { type: 'string', description: '"metric" or "imperial". Default: metric.', default: 'metric' },
        days: { type: 'integer', description: 'Forecast days.', default: 1 },
      },
      required: ['city'],
      additionalProperties: false,
    });
    expect(tool!.outputSchema).toEqual({
      type: 'object',
      properties: { summary: { type: 'string', description: 'One-line summary.' } },
      required: ['summary'],
    });
  });

  it.each([
    ['str', { type: 'string' }],
    ['string', { type: 'string' }],
    ['int', { type: 'integer' }],
    ['integer', { type: 'integer' }],
    ['float', { type: 'number' }],
    ['number', { type: 'number' }],
    ['bool', { type: 'boolean' }],
    ['boolean', { type: 'boolean' }],
    ['list', { type: 'array' }],
    ['array', { type: 'array' }],
    ['list[str]', { type: 'array', items: { type: 'string' } }],
    ['list[list[int]]', { type: 'array', items: { type: 'array', items: { type: 'integer' } } }],
    ['dict', { type: 'object' }],
    ['object', { type: 'object' }],
    ['dict[str, float]', { type: 'object', additionalProperties: { type: 'number' } }],
    ['any', {}],
    ['enum(a|b|c)', { type: 'string', enum: ['a', 'b', 'c'] }],
    ['enum(1|2|3)', { type: 'integer', enum: [1, 2, 3] }],
    ['enum("fast lane"|slow)', { type: 'string', enum: ['fast lane', 'slow'] }],
  ])('type %s becomes %j (and compiles)', (type, schema) => {
    const { tool, diagnostics } = parsePy(`Tool: t\nDescription: d\nInput:\n  x (${type}): X.\nOutput:\n  y (${type}): Y.`);
    expect(diagnostics).toEqual([]);
    expect(tool!.inputSchema.properties).toEqual({ x: { ...schema, description: 'X.' } });
    expect(() => ajv.compile(tool!.inputSchema)).not.toThrow();
    expect(() => ajv.compile(tool!.outputSchema!)).not.toThrow();
  });

  it.each([
    ['x (str, optional): X.', false, undefined],
    ['x (str, required): X.', true, undefined],
    ['x (int, default=3): X.', false, 3],
    ['x (int, default: 3): X.', false, 3],
    ['x (float): X. Default: 0.5.', false, 0.5],
    ['x (bool): Verbose. Default: false', false, false],
    ['x (list[str], default=["a", "b"]): X.', false, ['a', 'b']],
    ["x (list[str], default=['a', 'b']): X.", false, ['a', 'b']],
    ['x (dict, default={"k": 1}): X.', false, { k: 1 }],
    ['x (str, default=None): X.', false, undefined],
    ['x (Optional[int]): X.', false, undefined],
    ['x (Optional[int], default=3): X.', false, 3],
    ['x (Optional[str]): X. Default: 2024.', false, '2024'],
    ['x (Optional[bool], default=yes): X.', false, true],
    ['x (enum(a|b), default=b): X.', false, 'b'],
  ])('%s → required=%s default=%j', (line, required, dflt) => {
    const { tool, diagnostics } = parsePy(`Tool: t\nDescription: d\nInput:\n  ${line}`);
    expect(diagnostics).toEqual([]);
    // The schema compiles, and its default passes its own validation.
    const validate = ajv.compile(tool!.inputSchema);
    const filled: Record<string, unknown> = required ? { x: (tool!.inputSchema.properties as Record<string, { default?: unknown }>).x.default } : {};
    if (!required) expect(validate(filled), JSON.stringify(validate.errors)).toBe(true);
    expect(((tool!.inputSchema.required as string[] | undefined) ?? []).includes('x')).toBe(required);
    expect((tool!.inputSchema.properties as Record<string, { default?: unknown }>).x.default).toEqual(dflt);
  });

  // "Default:" in the prose is a default only when the rest of its sentence is one value of the type.
  it.each([
    ["currency (str, optional): Currency. Default: the account's currency.", undefined],
    ['limit (int, optional): Max rows. Default: all rows.', undefined],
    ['limit (int): Max rows. Default: all rows.', undefined], // a default in words: optional, no value
    ['since (str): Start date. Default: 30 days ago; ISO dates.', undefined],
    ['x (str): X. Default: metric.', 'metric'],
    ['x (str): X. Default: "two words". More prose.', 'two words'],
    ['x (str): X. Default: `metric`.', 'metric'],
    ['x (int): Max rows (Default: 5).', 5],
    ['x (int): Max rows. Default: -3', -3],
    ['x (bool): X. Default: true.', true],
    ['x (enum(metric|imperial)): X. Default: imperial.', 'imperial'],
    ['x (list[str]): X. Default: ["a", "b"].', ['a', 'b']],
    ['x (str): X.\n    Default: metric.', 'metric'],
  ])('description "%s" gives default %j', (line, dflt) => {
    const { tool, diagnostics } = parsePy(`Tool: t\nDescription: d\nInput:\n  ${line}`);
    expect(diagnostics).toEqual([]);
    const x = Object.values(tool!.inputSchema.properties as Record<string, { default?: unknown; description: string }>)[0];
    expect(x.default).toEqual(dflt);
    expect(x.description).toContain('Default:');
    expect(tool!.inputSchema.required).toBeUndefined();
  });

  it.each([
    ['limit (int): Max rows. Default: many.', 5, 26, 'is not an integer', 'limit (int, default=VALUE)'],
    ['units (enum(metric|imperial)): U. Default: kelvin.', 5, 37, 'is not one of "metric", "imperial"', 'units (enum(metric|imperial), default=VALUE)'],
    ['verbose (bool, optional): V. Default: off.', 5, 32, 'is not a boolean', 'verbose (bool, default=VALUE)'],
    ['limit (int): Max rows.\n    Default: many.', 6, 5, 'is not an integer', 'limit (int, default=VALUE)'],
  ])('a one-value "Default:" that does not fit the type is reported at "Default:": %s', (line, lineNo, column, message, hint) => {
    const { diagnostics } = parsePy(`Tool: t\nDescription: d\nInput:\n  ${line}`);
    expect(diagnostics).toMatchObject([{ code: 'FORGE_DOCSTRING_DEFAULT', line: lineNo, column, message: expect.stringContaining(message), hint: expect.stringContaining(hint) }]);
    expect(diagnostics[0].lineText!.slice(column - 1)).toMatch(/^Default:/);
  });

  it('joins indented continuation lines of a parameter description', () => {
    const { tool } = parsePy('Tool: t\nDescription: d\nInput:\n  x (str): First line\n    second line.\n  y (int): Y.');
    expect((tool!.inputSchema.properties as Record<string, { description: string }>).x.description).toBe('First line second line.');
  });

  it('keeps a blank-line separated description paragraph', () => {
    const { tool } = parsePy('Tool: t\nDescription: First paragraph.\n\n  Second paragraph.');
    expect(tool!.description).toBe('First paragraph.\n\nSecond paragraph.');
  });

  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['1.5s', 1500],
    ['2m', 120_000],
  ])('Timeout: %s is %d ms', (text, ms) => {
    expect(parsePy(`Tool: t\nDescription: d\nTimeout: ${text}`).tool!.timeoutMs).toBe(ms);
  });

  it('reads Category: dev', () => {
    expect(parsePy('Tool: t\nDescription: d\nCategory: dev').tool!.category).toBe('dev');
  });

  it('accepts a field name in any case', () => {
    expect(parsePy('tool: t\ndescription: d\nINPUT:\n  x (str): X.').tool!.name).toBe('t');
  });

  it.each([
    ['Composed Of: file_read, file_write\nSingle Confirmation: yes', { composedOf: ['file_read', 'file_write'], singleConfirmation: true }],
    ['ComposedOf: fs__read_file\n  file_write\nAtomic: true', { composedOf: ['fs__read_file', 'file_write'], singleConfirmation: true }],
    ['composed-of: a, a, b\nSingle Confirmation: no', { composedOf: ['a', 'b'] }],
  ])('reads composition fields: %j', (fields, expected) => {
    const { tool, diagnostics } = parsePy(`Tool: t\nDescription: d\n${fields}`);
    expect(diagnostics).toEqual([]);
    expect(tool).toMatchObject(expected);
    if (!('singleConfirmation' in expected)) expect(tool!.singleConfirmation).toBeUndefined();
  });

  it.each([
    ['Single Confirmation: sometimes', 'FORGE_DOCSTRING_FIELD', '"Single Confirmation:" takes yes or no'],
    ['Composed Of: bad.name', 'FORGE_DOCSTRING_COMPOSED', 'may only contain letters'],
  ])('reports a bad composition field: %j', (fields, code, message) => {
    const { diagnostics } = parsePy(`Tool: t\nDescription: d\n${fields}`);
    expect(diagnostics).toMatchObject([{ code, line: 4, message: expect.stringContaining(message) }]);
  });

  it('records where each Composed Of: name is written, on its line or a line continuing it', () => {
    const { tool } = parsePy('Tool: t\nDescription: d\nComposed Of: file_read, file\n  file_write');
    expect(tool!.composedOfAt).toMatchObject({ file_read: { line: 4, column: 14 }, file: { line: 4, column: 25 }, file_write: { line: 5, column: 3 } });
  });

  it('is not a tool without a Tool: line (a helper module)', () => {
    const { tool, diagnostics } = parsePy('Helpers for the other tools.');
    expect(tool).toBeUndefined();
    expect(diagnostics).toEqual([]);
  });
});

describe('parseDocstring: diagnostics with file:line:column', () => {
  // The docstring body starts on line 2 of the file (line 1 is the opening quotes).
  it.each([
    ['unknown type', 'Tool: t\nDescription: d\nInput:\n  when (strng): W.', 'FORGE_DOCSTRING_TYPE', 5, 9, 'did you mean "string"?'],
    ['unknown section', 'Tool: t\nDescription: d\nInputs:\n  x (str): X.', 'FORGE_DOCSTRING_FIELD', 4, 1, 'did you mean "Input"?'],
    ['misspelt field right under the description', 'Tool: t\nDescription: d\nTgas: read', 'FORGE_DOCSTRING_FIELD', 4, 1, 'did you mean "Tags"?'],
    ['unknown section right under the description (its inputs would vanish into it)', 'Tool: t\nDescription: d\nParameters:\n  city (str): C.', 'FORGE_DOCSTRING_FIELD', 4, 1, 'did you mean "Input"? Forge\'s docstrings list a tool\'s parameters under Input:'],
    ['another style\'s Args: section (not Tags:)', 'Tool: t\nDescription: d\n\nArgs:\n  city (str): C.', 'FORGE_DOCSTRING_FIELD', 5, 1, 'did you mean "Input"? Forge\'s docstrings list a tool\'s parameters under Input:'],
    ['another style\'s Returns: section', 'Tool: t\nDescription: d\n\nReturns:\n  the sum', 'FORGE_DOCSTRING_FIELD', 5, 1, 'did you mean "Output"? Forge\'s docstrings list what it returns under Output:'],
    ['an unknown field right under the description', 'Tool: t\nDescription: d\nOwner: alice', 'FORGE_DOCSTRING_FIELD', 4, 1, expect.stringContaining('indent the line if it continues Description:')],
    ['unknown field right under Tags (it would become tags)', 'Tool: t\nDescription: d\nTags: read\nOwner: alice', 'FORGE_DOCSTRING_FIELD', 5, 1, expect.stringContaining('known fields: Tool, Description')],
    ['unknown field right under Timeout', 'Tool: t\nDescription: d\nTimeout: 5s\nOwner: alice', 'FORGE_DOCSTRING_FIELD', 5, 1, undefined],
    ['duplicate parameter', 'Tool: t\nDescription: d\nInput:\n  x (str): X.\n  x (int): X again.', 'FORGE_DOCSTRING_DUPLICATE', 6, 3, 'remove one of the two lines, or rename one parameter'],
    ['missing type', 'Tool: t\nDescription: d\nInput:\n  x: X.', 'FORGE_DOCSTRING_SYNTAX', 5, 4, undefined],
    ['missing description', 'Tool: t\nTags: read', 'FORGE_DOCSTRING_MISSING', 2, 1, undefined],
    ['bad category', 'Tool: t\nDescription: d\nCategory: builtin', 'FORGE_DOCSTRING_CATEGORY', 4, 11, undefined],
    ['misspelt category', 'Tool: t\nDescription: d\nCategory: cstom', 'FORGE_DOCSTRING_CATEGORY', 4, 11, 'did you mean "custom"?'],
    ['timeout without unit', 'Tool: t\nDescription: d\nTimeout: 10', 'FORGE_DOCSTRING_TIMEOUT', 4, 10, 'add a unit: "10s" or "10ms"'],
    ['default of the wrong type', 'Tool: t\nDescription: d\nInput:\n  n (int, default=many): N.', 'FORGE_DOCSTRING_DEFAULT', 5, 11, "a default is a value of the parameter's type, int; or leave it out and make the parameter optional"],
    ['default outside the enum', 'Tool: t\nDescription: d\nInput:\n  n (enum(a|b), default=c): N.', 'FORGE_DOCSTRING_DEFAULT', 5, 17, undefined],
    ['an Optional[T] default of the wrong type', 'Tool: t\nDescription: d\nInput:\n  n (Optional[int], default=abc): N.', 'FORGE_DOCSTRING_DEFAULT', 5, 21, undefined],
    ['an Optional[enum] default outside the enum', 'Tool: t\nDescription: d\nInput:\n  n (Optional[enum(a|b)], default=c): N.', 'FORGE_DOCSTRING_DEFAULT', 5, 27, undefined],
    ['unknown parameter option', 'Tool: t\nDescription: d\nInput:\n  n (int, optinal): N.', 'FORGE_DOCSTRING_SYNTAX', 5, 11, 'did you mean "optional"? options are: optional, required, default=VALUE'],
    ['misspelt default option', 'Tool: t\nDescription: d\nInput:\n  n (int, defualt=3): N.', 'FORGE_DOCSTRING_SYNTAX', 5, 11, 'did you mean "default=3"? options are: optional, required, default=VALUE'],
    ['parameter option like none', 'Tool: t\nDescription: d\nInput:\n  n (int, frobnicate): N.', 'FORGE_DOCSTRING_SYNTAX', 5, 11, 'options are: optional, required, default=VALUE'],
    ['reserved "__" in the name', 'Tool: my__tool\nDescription: d', 'FORGE_TOOL_NAME', 2, 7, expect.stringContaining('ASCII letters, digits, _ and -')],
    ['invalid characters in the name', 'Tool: my tool\nDescription: d', 'FORGE_TOOL_NAME', 2, 7, undefined],
    ['enum without values', 'Tool: t\nDescription: d\nInput:\n  n (enum()): N.', 'FORGE_DOCSTRING_TYPE', 5, 6, undefined],
    ['duplicate field', 'Tool: t\nDescription: d\nDescription: again', 'FORGE_DOCSTRING_DUPLICATE', 4, 1, 'keep one Description: line; indent lines that continue it'],
    ['stray text', 'Tool: t\nDescription: d\n\nsome words here', 'FORGE_DOCSTRING_SYNTAX', 5, 1, undefined],
  ])('%s', (_name, body, code, line, column, hint) => {
    const { diagnostics } = parsePy(body);
    const d = diagnostics.find((x) => x.code === code);
    expect(d, JSON.stringify(diagnostics)).toBeDefined();
    expect(d).toMatchObject({ severity: 'error', file: 'tools/t.py', line, column });
    if (hint) expect(d!.hint).toEqual(hint);
    // The caret line is the file's line, so a renderer can point at the column.
    expect(d!.lineText).toBe(`"""\n${body}\n"""`.split('\n')[line - 1]);
  });

  it('continues a field with prose directly under it, a URL included, but not with a line shaped as a field', () => {
    const { tool, diagnostics } = parsePy('Tool: t\nDescription: Reads the page at\nhttps://example.com and sums it\nup, in two words.');
    expect(diagnostics).toEqual([]);
    expect(tool!.description).toBe('Reads the page at https://example.com and sums it up, in two words.');
  });

  it('warns when a docstring looks like a tool but has no Tool: line', () => {
    const { tool, diagnostics } = parsePy('Description: d\nInput:\n  x (str): X.');
    expect(tool).toBeUndefined();
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_DOCSTRING_NO_TOOL' }]);
  });

  it('reports every problem, not just the first', () => {
    const { diagnostics } = parsePy('Tool: t\nDescription: d\nInput:\n  a (strng): A.\n  b (intt): B.');
    expect(diagnostics.map((d) => d.line)).toEqual([5, 6]);
  });
});

describe('docstring extraction', () => {
  it('finds a Python module docstring after a shebang, comments and an encoding line', () => {
    const source = '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\nr"""Tool: t\nDescription: d\n"""\nimport os\n';
    const found = extractPythonDocstring(source);
    expect(found.kind).toBe('found');
    if (found.kind !== 'found') return;
    expect(found.docstring.lines.map((l) => [l.text, l.line, l.column])).toEqual([
      ['Tool: t', 4, 5],
      ['Description: d', 5, 1],
    ]);
  });

  it('ignores a string that is not the first statement', () => {
    expect(extractPythonDocstring('import os\n"""Tool: t"""\n').kind).toBe('none');
  });

  it('reports an unterminated docstring with its position', () => {
    expect(extractPythonDocstring('\n"""Tool: t\nDescription: d\n')).toEqual({ kind: 'unterminated', line: 2, column: 1 });
  });

  it('finds the JSDoc comment that declares the tool, after imports and a license comment', () => {
    const source = "/* Copyright 2026 */\nimport x from 'y';\n/**\n * Tool: t\n * Description: d\n *   more\n */\nexport function execute() {}\n";
    const found = extractScriptDocstring(source);
    expect(found.kind).toBe('found');
    if (found.kind !== 'found') return;
    expect(found.docstring.lines.map((l) => [l.text, l.line, l.column])).toEqual([
      ['Tool: t', 4, 4],
      ['Description: d', 5, 4],
      ['  more', 6, 4],
    ]);
  });

  it('handles a block comment without leading stars', () => {
    const found = extractScriptDocstring('/*\nTool: t\nDescription: d\n*/\n');
    expect(found.kind === 'found' && found.docstring.lines.map((l) => l.text)).toEqual(['Tool: t', 'Description: d']);
  });

  it('points TypeScript diagnostics at the right file column', () => {
    const source = '/**\n * Tool: t\n * Description: d\n * Input:\n *   x (strr): X.\n */\n';
    const found = extractScriptDocstring(source);
    if (found.kind !== 'found') throw new Error('not found');
    const { diagnostics } = parseDocstring(found.docstring, 'tools/t.ts');
    expect(diagnostics).toMatchObject([{ code: 'FORGE_DOCSTRING_TYPE', line: 5, column: 9, lineText: ' *   x (strr): X.' }]);
  });
});

describe('a tool file that would run as a script', () => {
  const py = (body: string) => scriptToolProblem('python', body, true)?.code;
  const ts = (body: string) => scriptToolProblem('typescript', body, true)?.code;

  it.each([
    'import json, sys\nprint(json.dumps(json.load(sys.stdin)))',
    'import json, sys\nargs = json.loads(sys.stdin.read())',
    'import json, sys\nargs = json.load(sys.__stdin__)',
    'import json, os\nargs = json.loads(os.read(0, 65536))',
    'import json\nargs = json.load(open(0))',
    'import argparse\nparser = argparse.ArgumentParser()',
    'line = input()',
  ])('is a script when it reads its input (Python): %j', (body) => {
    expect(py(body)).toBeUndefined();
  });

  it.each([
    "import { readFileSync } from 'node:fs';\nfunction execute(a) { return a; }\nconsole.log(JSON.stringify(execute(JSON.parse(readFileSync(0, 'utf8')))));",
    "let text = '';\nfor await (const chunk of process.stdin) text += chunk;\nconsole.log(text);",
    "const fs = require('fs');\nconsole.log(fs.readFileSync('/dev/stdin', 'utf8'));",
    "import { readSync } from 'node:fs';\nconst b = Buffer.alloc(100);\nreadSync(0, b);",
  ])('is a script when it reads its input (TS/JS): %j', (body) => {
    expect(ts(body)).toBeUndefined();
  });

  it('says so when execute is defined but not exported, or when nothing reads the declared inputs', () => {
    expect(ts('async function execute(args) { return args; }')).toBe('FORGE_EXECUTE_NOT_EXPORTED');
    expect(ts('const execute = (args) => args;')).toBe('FORGE_EXECUTE_NOT_EXPORTED');
    expect(ts('function execute<T>(args: T): T { return args; }')).toBe('FORGE_EXECUTE_NOT_EXPORTED');
    expect(py('def exceute(args):\n    return args')).toBe('FORGE_SCRIPT_READS_NOTHING');
    expect(scriptToolProblem('python', 'print("hello")', false)).toBeUndefined();
  });

  it.each([
    ['python', 'import os\n\ndef exceute(args):\n    return args\n', 3, 5, 'exceute'],
    ['python', 'async def execut(args):\n    return args\n', 1, 11, 'execut'],
    ['typescript', 'export async function exectue(args) {\n  return args;\n}\n', 1, 23, 'exectue'],
  ] as const)('points a misspelt execute (%s) at its name, with the name it meant', (kind, source, line, column, name) => {
    expect(scriptToolProblem(kind, source, true)).toMatchObject({ code: 'FORGE_SCRIPT_READS_NOTHING', line, column, message: expect.stringContaining(`only "${name}"`), hint: 'did you mean "execute"?' });
  });

  it('keeps its general hint when no function is named like execute', () => {
    expect(scriptToolProblem('python', 'def main(args):\n    return args\n', true)).toMatchObject({ line: 1, column: 1, hint: expect.stringContaining('check its spelling') });
  });

  it('finds execute exported with type parameters, as a default export, or as the default export itself', () => {
    for (const body of ['export function execute<T>(args: T) { return args; }', 'export default async function execute(args) {}', 'function execute() {}\nexport default execute;']) {
      expect(definesExecute('typescript', body), body).toBe(true);
    }
  });
});

describe('parameters named like members of Object.prototype', () => {
  it('constructor is a parameter like any other: defaulted when left out, required when it has no default', () => {
    const { tool, diagnostics } = parsePy(`Tool: odd_names
Description: Odd names.
Tags: read

Input:
  constructor (str, default=x): Who built it.
  tostring (str): Kept as text.`);
    expect(diagnostics).toEqual([]);
    const schema = tool!.inputSchema;
    expect(checkArguments(schema, { tostring: 'a' })).toEqual({ ok: true, args: { tostring: 'a', constructor: 'x' }, errors: [] });
    expect(checkArguments(schema, { tostring: 'a', constructor: 'Ada' }).args).toEqual({ tostring: 'a', constructor: 'Ada' });
    const required = parsePy('Tool: t\nDescription: T.\n\nInput:\n  constructor (str): Who built it.').tool!.inputSchema;
    expect(checkArguments(required, {}).errors).toEqual(['missing required argument "constructor"']);
    expect(Object.getPrototypeOf(checkArguments(required, { constructor: 'Ada' }).args)).toBe(Object.prototype);
  });

  it('constructor nested in an object or an array gets its default too', () => {
    const schema = {
      type: 'object',
      properties: {
        build: { type: 'object', properties: { constructor: { type: 'string', default: 'x' } } },
        builds: { type: 'array', items: { type: 'object', properties: { constructor: { type: 'string', default: 'y' } } } },
      },
    };
    const { args } = checkArguments(schema, { build: {}, builds: [{}, { constructor: 'Ada' }] });
    expect(args).toEqual({ build: { constructor: 'x' }, builds: [{ constructor: 'y' }, { constructor: 'Ada' }] });
    const built = args as { build: object; builds: object[] };
    for (const object of [args as object, built.build, ...built.builds]) expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
  });

  it('refuses a parameter named __proto__, which a schema validator skips', () => {
    const { diagnostics } = parsePy('Tool: t\nDescription: T.\n\nInput:\n  __proto__ (dict): A mapping.');
    expect(diagnostics).toMatchObject([{ code: 'FORGE_DOCSTRING_SYNTAX', message: 'a parameter cannot be named "__proto__"' }]);
  });
});
