/**
 * What an adapter tool's schemas leave out of the check made here: a
 * pattern only the backtracking engine runs (a lookaround, a backreference,
 * `\p{…}`), and nothing else. Checked through the registry, as a call is,
 * with arguments that would backtrack for hours if the pattern ran.
 */
import { describe, expect, it } from 'vitest';
import { checkOutput } from '../../../runtime/tools/output-check.ts';
import { checkedInputSchema, uncheckedPatternsWarning, withoutUnprotectedPatterns } from '../../../runtime/tools/local-schema.ts';
import { ok, toSpec, type JSONSchema, type Tool, type ToolSpec } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

/** What none of the patterns here match. */
const MISMATCH = 'aaa!';

function adapterTool(inputSchema: JSONSchema, outputSchema?: JSONSchema, received: unknown[] = []): Tool {
  return {
    name: 'svc__lookup',
    description: 'Looks up.',
    category: 'adapter',
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    tags: ['read'],
    adapter: { kind: 'mcp', server: 'svc', tool: 'lookup' },
    execute: async (args) => {
      received.push(args);
      return ok({ got: args });
    },
  };
}

describe('withoutUnprotectedPatterns', () => {
  it('leaves out lookarounds, backreferences and \\p{…}, keeps what the linear-time engine runs, and says where each was', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', pattern: '^(?=(a+)+$)' },
        b: { type: 'array', items: { type: 'string', pattern: '^(a+)+\\1$' } },
        c: { anyOf: [{ type: 'string', pattern: '^(\\p{L}+)+$' }, { type: 'number' }] },
        d: { type: 'string', pattern: '^(a+)+$' },
        'x/y': { type: 'string', pattern: '(?<!b)a' },
      },
    };
    const { schema: local, unchecked } = withoutUnprotectedPatterns(schema);
    expect(unchecked).toEqual([
      { at: '/properties/a/pattern', pattern: '^(?=(a+)+$)', why: 'a lookaround' },
      { at: '/properties/b/items/pattern', pattern: '^(a+)+\\1$', why: 'a backreference' },
      { at: '/properties/c/anyOf/0/pattern', pattern: '^(\\p{L}+)+$', why: 'a Unicode property or code point escape' },
      { at: '/properties/x~1y/pattern', pattern: '(?<!b)a', why: 'a lookaround' },
    ]);
    expect(local).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'string' } }, c: { anyOf: [{ type: 'string' }, { type: 'number' }] }, d: { type: 'string', pattern: '^(a+)+$' }, 'x/y': { type: 'string' } },
    });
    // The declared schema is untouched: it is what clients are shown.
    expect(schema.properties.a.pattern).toBe('^(?=(a+)+$)');
  });

  it('is the schema itself when nothing is left out, and the same copy every time otherwise (the validator compiles each object once)', () => {
    const plain = { type: 'object', properties: { d: { type: 'string', pattern: '^[a-z]+$' } } };
    expect(withoutUnprotectedPatterns(plain).schema).toBe(plain);
    const risky = { type: 'object', properties: { a: { type: 'string', pattern: '(?=a)' } } };
    expect(withoutUnprotectedPatterns(risky).schema).toBe(withoutUnprotectedPatterns(risky).schema);
  });

  it('does not touch data that has a field named "pattern": a default, an enum, examples', () => {
    const schema = { type: 'object', properties: { filter: { type: 'object', default: { pattern: '(?=x)' }, enum: [{ pattern: '\\1' }], examples: [{ pattern: '(?!y)' }] } } };
    expect(withoutUnprotectedPatterns(schema)).toEqual({ schema, unchecked: [] });
  });

  it('leaves out a patternProperties key, and with it additionalProperties there: which properties it matched is not known', () => {
    const schema = { type: 'object', patternProperties: { '^x-(?!internal)': { type: 'string' }, '^n-\\d+$': { type: 'number' } }, additionalProperties: false };
    const { schema: local, unchecked } = withoutUnprotectedPatterns(schema);
    expect(unchecked).toEqual([{ at: '/patternProperties/^x-(?!internal)', pattern: '^x-(?!internal)', why: 'a lookaround' }]);
    expect(local).toEqual({ type: 'object', patternProperties: { '^n-\\d+$': { type: 'number' } } });
  });
});

describe('an adapter tool\'s arguments and result, checked here', () => {
  const registry = (tool: Tool) => {
    const r = new ToolRegistry({ workDir: tempDir() });
    expect(r.register(tool, 'test')).toBeUndefined();
    return r;
  };

  it('skip a pattern only the backtracking engine runs: the call reaches the service', async () => {
    const received: unknown[] = [];
    const tool = adapterTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)' } }, required: ['q'] }, undefined, received);
    const result = await registry(tool).execute('svc__lookup', { q: MISMATCH });
    expect(result).toMatchObject({ ok: true });
    expect(received).toEqual([{ q: MISMATCH }]);
    // The rest of the schema is still checked.
    expect(await registry(tool).execute('svc__lookup', { q: 3 })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('"q" must be a string') } });
  });

  it.each([
    ['a $ref to a part no schema keyword holds', { type: 'object', 'x-stash': { type: 'string', pattern: '^(?=(a+)+$)' }, properties: { q: { $ref: '#/x-stash' } } }],
    ['a $ref into a default (data the walk leaves alone)', { type: 'object', properties: { q: { $ref: '#/properties/z/default' }, z: { default: { type: 'string', pattern: '^(a+)+\\1$' } } } }],
    ['a $ref to an $id kept where no schema keyword is', { type: 'object', 'x-s': { $id: 'urn:evil:s', type: 'string', pattern: '(?<!b)a$' }, properties: { q: { $ref: 'urn:evil:s' } } }],
  ])('skip such a pattern reached through %s: ajv never runs it', async (_how, inputSchema) => {
    const received: unknown[] = [];
    const tool = adapterTool(inputSchema, { type: 'object', properties: { got: inputSchema } }, received);
    const result = await registry(tool).execute('svc__lookup', { q: MISMATCH });
    expect(result).toMatchObject({ ok: true });
    expect(received).toMatchObject([{ q: MISMATCH }]);
    expect(checkOutput(tool, ok({ got: { q: MISMATCH } }), { strict: true, log: silentLogger })).toMatchObject({ ok: true });
  });

  it('still check a pattern the linear-time engine runs, runaway or not', async () => {
    const received: unknown[] = [];
    const tool = adapterTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } }, undefined, received);
    const result = await registry(tool).execute('svc__lookup', { q: MISMATCH });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('must match pattern "^(a+)+$"') } });
    expect(received).toEqual([]);
  });

  it('skip such a pattern in the output schema too', () => {
    const tool = adapterTool({ type: 'object' }, { type: 'object', properties: { got: { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+\\1$' } } } } });
    const result = ok({ got: { q: MISMATCH } });
    expect(checkOutput(tool, result, { strict: true, log: silentLogger })).toBe(result);
  });

  it('are listed with the schema as the service declared it', () => {
    const tool = adapterTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)' } } });
    expect(toSpec(tool).inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)' } } });
  });
});

describe('another tool\'s schema', () => {
  it('is checked as declared: only an adapter\'s (the service\'s own) is not Forge\'s to refuse', () => {
    const spec: ToolSpec = { name: 'mine', description: 'x', category: 'custom', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '(?=a)' } } }, tags: ['read'] };
    expect(checkedInputSchema(spec)).toBe(spec.inputSchema);
    expect(uncheckedPatternsWarning(spec)).toBeUndefined();
  });
});

describe('uncheckedPatternsWarning', () => {
  it('names the tool, the service, each pattern and where it is', () => {
    const tool = adapterTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)' } } }, { type: 'object', properties: { r: { type: 'string', pattern: '\\1' } } });
    const warning = uncheckedPatternsWarning(tool);
    expect(warning).toMatchObject({ severity: 'warning', code: 'FORGE_ADAPTER_PATTERN', hint: expect.stringContaining('MCP server "svc" still checks') });
    expect(warning!.message).toContain('tool "svc__lookup"');
    expect(warning!.message).toContain('input schema /properties/q/pattern: "^(?=(a+)+$)" (a lookaround)');
    expect(warning!.message).toContain('output schema /properties/r/pattern: "\\\\1" (a backreference)');
  });
});
