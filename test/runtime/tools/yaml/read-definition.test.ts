import { describe, expect, it } from 'vitest';
import { readYamlTool } from '../../../../runtime/tools/yaml/read-definition.ts';
import { parseTemplate, renderText, renderValue } from '../../../../runtime/tools/yaml/template.ts';
import { yamlToolSpec } from '../../../../runtime/tools/yaml/yaml-tool.ts';
import { problemsOf } from './helpers.ts';

const base = { description: 'A tool.', parameters: { name: { type: 'string' }, n: { type: 'integer', default: 1 } } };
const codes = (source: Record<string, unknown>) => problemsOf({ ...base, ...source }).filter((p) => p.severity === 'error').map((p) => [p.code, p.message]);

describe('templates', () => {
  it.each([
    ['{name}', ['ref:name']],
    ['{step.output}', ['ref:step.output']],
    ['{RAW:name}', ['raw:name']],
    ['a {{name}} b', ['text:a {name} b']],
    ['${HOME}/x', ['text:${HOME}/x']],
    ['{ echo; }', ['text:{ echo; }']],
    ['{a,b} {1..3} {"k": 1} {}', ['text:{a,b} {1..3} {"k": 1} {}']],
    ['{0}', ['text:{0}']],
  ])('parses %j', (source, expected) => {
    const { template } = parseTemplate(source);
    expect(template.segments.map((s) => (s.kind === 'text' ? `text:${s.text}` : s.kind === 'ref' ? `${s.raw ? 'raw' : 'ref'}:${s.raw ? s.ref.text.slice(4) : s.ref.text}` : `env:${s.name}`))).toEqual(expected);
  });

  it('reads ${VAR} from the environment only where asked to', () => {
    const { template } = parseTemplate('${HOME}/{name}', { env: true });
    expect(renderText(template, () => 'x', { HOME: '/home/me' })).toBe('/home/me/x');
    expect(parseTemplate('${not a name}', { env: true }).problems[0].message).toContain('is not an environment variable reference');
  });

  it('keeps a lone placeholder\'s type and makes text of anything else', () => {
    const values: Record<string, unknown> = { obj: { a: [1] }, n: 3 };
    const resolve = (ref: { root: string }) => values[ref.root];
    expect(renderValue(parseTemplate('{obj}').template, resolve)).toEqual({ a: [1] });
    expect(renderValue(parseTemplate('n={n} obj={obj}').template, resolve)).toBe('n=3 obj={"a":[1]}');
  });
});

describe('reading a YAML tool: an output: written as JSON', () => {
  const outputJson = (output: string) => readYamlTool({ ...base, sh: 'true', output }, 't').definition?.outputJson;

  it.each([
    ['{"a": "{name}", "n": {n}}', ['string', 'value']],
    ['[{n}, "x{name}y", {"{name}": [{n}]}]', ['value', 'string', 'string', 'value']],
    ['{"a": "\\"{name}\\\\", "b": {n}}', ['string', 'value']],
    ['{{"text": "{name}"}}', ['string']],
  ])('finds where each placeholder of %j stands, once, when the tool loads', (output, places) => {
    expect(outputJson(output)).toEqual(places);
  });

  it.each([['[{name}] {n}'], ['{name}'], ['x: "{name}"'], ['"{name}"'], ['{"a": "\\{name}"}'], ['{"a": {n}{n}}'], ['{"a": -{n}}'], ['{"a": {n},}']])('reads %j as plain text', (output) => {
    expect(outputJson(output)).toBeUndefined();
  });
});

describe('reading a YAML tool: placeholders are refused where no escaping is safe', () => {
  it.each([
    ['inside backticks', { bash: 'echo `echo {name}`' }],
    ['inside ${...}', { bash: 'echo "${X:-{name}}"' }],
    ['right after a backslash', { bash: 'echo \\{name}' }],
    ['right after a backslash', { bash: 'echo "\\{name}"' }],
    ["in a here-document's delimiter", { bash: 'cat <<{name}\nx\nEND' }],
    ["on a here-document's closing line", { bash: 'cat <<END\nx\nEND{name}\n' }],
    ['in an eval command', { bash: 'eval "echo {name}"' }],
    ['in an eval command', { bash: 'x=1; eval echo {name}' }],
    ["inside an f-string's {...}", { python: "print(f'{ {name} }')" }],
    ['right after a name or number', { python: 'print(f{name})' }],
    ['right after a backslash', { python: "print('\\{name}')" }],
  ])('%s: %j', (where, tool) => {
    const found = codes(tool);
    expect(found).toHaveLength(1);
    expect(found[0][0]).toBe('FORGE_YAML_PLACEHOLDER');
    expect(found[0][1]).toContain(where);
  });

  it('refuses placeholders in a script whose interpreter it cannot quote for, but allows RAW', () => {
    expect(codes({ script: 'console.log({name})', shell: 'node {0}' })[0][1]).toContain('whose quoting Forge does not know');
    expect(codes({ script: 'console.log({RAW:name})', shell: 'node {0}' })).toEqual([]);
  });

  it('warns about every RAW placeholder', () => {
    const warnings = problemsOf({ ...base, bash: 'echo {RAW:name}; echo {RAW:n}' }).filter((p) => p.severity === 'warning');
    expect(warnings.map((w) => [w.code, w.offset])).toEqual([
      ['FORGE_YAML_RAW', 5],
      ['FORGE_YAML_RAW', 22],
    ]);
  });
});

describe('reading a YAML tool: references and structure', () => {
  it.each([
    [{ bash: 'echo {nmae}' }, 'FORGE_YAML_REFERENCE', '{nmae} names no parameter, step or output_var'],
    [{ steps: [{ name: 'a', bash: 'echo {b.output}' }, { name: 'b', bash: 'true' }] }, 'FORGE_YAML_REFERENCE', 'refers to step "b", which runs later'],
    [{ steps: [{ name: 'a', bash: 'echo {a.output}' }] }, 'FORGE_YAML_REFERENCE', 'step "a" refers to its own result'],
    [{ steps: [{ name: 'a', bash: 'true' }, { name: 'b', bash: 'echo {a.outptu}' }] }, 'FORGE_YAML_REFERENCE', "a step's result has .output, .stdout, .stderr, .exit-code"],
    [{ steps: [{ name: 'a', bash: 'true' }, { name: 'a', bash: 'true' }] }, 'FORGE_YAML_STEP_NAME', 'two steps are named "a"'],
    [{ steps: [{ name: 'name', bash: 'true' }] }, 'FORGE_YAML_STEP_NAME', 'has the name of a parameter'],
    [{ steps: [{ name: 'a', bash: 'true', run: 'true' }] }, 'FORGE_YAML_STEP', 'a step has one action, this one has bash and run'],
    [{ bash: 'true', steps: [{ bash: 'true' }] }, 'FORGE_YAML_STEP', 'use steps: or a single bash:, not both'],
    [{}, 'FORGE_YAML_STEP', 'the tool has nothing to run'],
    [{ bash: 'true', environment: { X: '{a.output}' } }, 'FORGE_YAML_REFERENCE', 'names no parameter'],
    [{ steps: [{ name: 'a', bash: 'true', when: "{n} => 'x'" }] }, 'FORGE_YAML_CONDITION', 'unexpected'],
    [{ run: "echo 'unclosed" }, 'FORGE_YAML_COMMAND', 'unclosed single quote'],
    [{ bash: 'true', platforms: ['linux', 'macOS'] }, 'FORGE_YAML_PLATFORM', 'unknown platform "macOS"'],
    [{ bash: 'true', timeout: 'soon' }, 'FORGE_YAML_TIMEOUT', 'invalid timeout "soon"'],
    [{ bash: 'true', dependencies: ['not a tool'] }, 'FORGE_YAML_DEPENDENCY', 'is not a dependency'],
    [{ bash: 'true', dependencies: ['team_42/fetch'] }, 'FORGE_YAML_DEPENDENCY', 'is not a dependency'],
    [{ steps: [{ tool: 'summarize@^1.0.0' }] }, 'FORGE_YAML_TOOL_REF', '"tool:" must name a tool'],
    [{ steps: [{ tool: 'user/sum marize' }] }, 'FORGE_YAML_TOOL_REF', '"tool:" must name a tool'],
    [{ bash: 'true', parameters: { input: { type: 'string' } } }, 'FORGE_YAML_PARAMETER', '"input" is reserved'],
    // A schema validator skips a property of that name: it could be neither checked nor passed.
    [{ bash: 'true', parameters: JSON.parse('{"__proto__": {"type": "string"}}') }, 'FORGE_YAML_PARAMETER', 'a parameter cannot be named "__proto__"'],
    [{ bash: 'true', parameters: { x: { type: 'strng' } } }, 'FORGE_YAML_PARAMETER', 'unknown type "strng"'],
    [{ bash: 'true', parameters: { x: { type: 'integer', default: 'one' } } }, 'FORGE_YAML_PARAMETER', 'the default of parameter "x" is not an integer'],
    [{ bash: 'true', tgas: ['read'] }, 'FORGE_YAML_FIELD', 'unknown field "tgas"'],
  ] as [Record<string, unknown>, string, string][])('%j → %s', (source, code, message) => {
    const data = 'parameters' in source ? { description: 'A tool.', ...source } : { ...base, ...source };
    const errors = problemsOf(data).filter((p) => p.severity === 'error');
    expect(errors.map((e) => e.code)).toContain(code);
    expect(errors.find((e) => e.code === code)!.message).toContain(message);
  });

  it('suggests the parameter meant', () => {
    const [problem] = problemsOf({ ...base, bash: 'echo {nmae}' });
    expect(problem.hint).toBe('did you mean "name"?');
  });

  it('derives composedOf from tool steps and keeps scope and range of dependencies', () => {
    const { definition } = readYamlTool(
      {
        description: 'Meta.',
        atomic: true,
        dependencies: ['summarize@^1.2.0', 'user/fetch'],
        steps: [{ name: 'a', tool: 'user/fetch' }, { name: 'b', tool: 'summarize', args: { text: '{a.output}' } }, { name: 'c', tool: 'summarize' }],
      },
      'meta',
    );
    expect(definition!.dependencies).toMatchObject([
      { name: 'summarize', range: '^1.2.0', text: 'summarize@^1.2.0' },
      { name: 'fetch', scope: 'user', text: 'user/fetch' },
    ]);
    const spec = yamlToolSpec(definition!, { kind: 'yaml', path: 'tools/meta.yaml', sha256: 'x' });
    expect(spec).toMatchObject({ name: 'meta', composedOf: ['fetch', 'summarize'], singleConfirmation: true, tags: [] });
    expect(definition!.steps.map((s) => s.needs)).toEqual([[], ['a'], []]);
  });
});
