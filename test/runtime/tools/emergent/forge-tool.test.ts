/**
 * forge_tool in a real registry over a temp work dir: sandboxed code and
 * compositions forged, tested against their expectedOutput, judged,
 * registered in tiers, kept under .forge/forged/ and registered again after
 * a restart; quotas and the build's refusals.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tools } from '../../../helpers/tools.ts';
import { tempDir } from '../../../helpers/project.ts';
import type { ForgeResult } from '../../../../runtime/tools/emergent/forge-request.ts';
import { sessionView } from '../../../../runtime/tools/emergent/session-view.ts';
import { calcJson } from '../../../helpers/forge-requests.ts';
import { putInForce } from '../../../../runtime/tools/emergent/emergent-policy.ts';
import { ForgedStore, forgedRoot } from '../../../../runtime/tools/emergent/forged-store.ts';
import { setActiveState } from '../../../../runtime/state/active-state.ts';
import type { ForgedChange, StateStore } from '../../../../runtime/state/store.ts';
import { ok } from '../../../../runtime/tools/model.ts';
import type { EmergentSettings } from '../../../../runtime/tools/emergent/forge-request.ts';

const addNumbers = {
  name: 'add_numbers',
  description: 'Add two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a + input.b }; }' },
  testCases: [
    { input: { a: 1, b: 2 }, expectedOutput: { sum: 3 } },
    { input: { a: -1.5, b: 0.5 }, expectedOutput: { sum: -1 } },
  ],
};

const toolNames = ['forge_tool', 'uuid_generate', 'json_parse', 'math_calculate'];

async function harness(workDir = tempDir(), config: Record<string, unknown> = {}) {
  return tools(toolNames, { workDir, config: { forge_tool: { timeout: 3, memory: 48, ...config } } });
}

async function forgeIn(h: Awaited<ReturnType<typeof harness>>, request: unknown, session = 'context:one'): Promise<ForgeResult> {
  const result = await h.registry.execute('forge_tool', request, { session, timeoutMs: 60_000 });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value as ForgeResult;
}

describe('forge_tool', () => {
  it('forges sandboxed code that passes its tests, registers it for the session, and runs it warm', async () => {
    const workDir = tempDir();
    const h = await harness(workDir);
    const result = await forgeIn(h, addNumbers);
    expect(result).toMatchObject({ success: true, tool: 'add_numbers', tier: 'session', verdict: { approved: true }, errors: [] });
    expect(result.testResults.map((t) => t.passed)).toEqual([true, true]);
    expect(result.verdict.checks.map((c) => c.name)).toEqual(['tests_pass', 'schemas_valid', 'inputs_exercised', 'resources_under_caps']);
    const called = await h.registry.execute('add_numbers', { a: 40, b: 2 }, { session: 'context:one' });
    expect(called).toMatchObject({ ok: true, value: { sum: 42 } });
    for (const file of ['tool.json', 'code.js', 'tests.json', 'verdict.json']) expect(existsSync(join(workDir, '.forge', 'forged', 'add_numbers', file))).toBe(true);
    expect(readFileSync(join(workDir, '.forge', 'forged', 'add_numbers', 'code.js'), 'utf8')).toBe(addNumbers.implementation.code);
  });

  it('refuses code whose output disagrees with expectedOutput, showing input, expected, actual and a diff', async () => {
    const h = await harness();
    const wrong = { ...addNumbers, name: 'add_wrong', implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a - input.b }; }' } };
    const result = await forgeIn(h, wrong);
    expect(result.success).toBe(false);
    expect(result.errors[0].code).toBe('FORGE_FORGE_TEST_FAILED');
    const failed = result.testResults[0];
    expect(failed).toMatchObject({ input: { a: 1, b: 2 }, expected: { sum: 3 }, actual: { sum: -1 }, passed: false });
    expect(failed.diff).toContain('-  "sum": 3');
    expect(failed.diff).toContain('+  "sum": -1');
    expect(h.registry.has('add_wrong')).toBe(false);
  });

  it('refuses output that equals expectedOutput but breaks outputSchema', async () => {
    const h = await harness();
    const result = await forgeIn(h, { ...addNumbers, name: 'add_text', outputSchema: { type: 'object', properties: { sum: { type: 'string' } } } });
    expect(result.success).toBe(false);
    expect(result.testResults[0]).toMatchObject({ passed: false, actual: { sum: 3 }, error: expect.stringContaining('does not match outputSchema') });
    expect(result.testResults[0].diff).toBeUndefined();
  });

  it('forges a composition of two builtins with the YAML meta-tool engine', async () => {
    const h = await harness();
    const result = await forgeIn(h, calcJson);
    expect(result.errors).toEqual([]);
    expect(result.success).toBe(true);
    expect(h.registry.get('calc_json')?.composedOf).toEqual(['math_calculate', 'json_parse']);
  });

  it('refuses at build: unknown composed tool, forge_tool itself, a name taken, code that does not parse, a schema that does not compile', async () => {
    const h = await harness();
    const codes = async (request: unknown) => (await forgeIn(h, request)).errors.map((e) => e.code);
    expect(await codes({ ...addNumbers, name: 'c1', implementation: { mode: 'compose', steps: [{ tool: 'nope' }] } })).toContain('FORGE_TOOL_UNKNOWN');
    expect(await codes({ ...addNumbers, name: 'c2', implementation: { mode: 'compose', steps: [{ tool: 'forge_tool' }] } })).toContain('FORGE_FORGE_TOOL');
    expect(await codes({ ...addNumbers, name: 'uuid_generate' })).toContain('FORGE_TOOL_COLLISION');
    expect(await codes({ ...addNumbers, name: 'c3', implementation: { mode: 'sandbox', code: 'function execute( {' } })).toContain('FORGE_CODE_SYNTAX');
    expect(await codes({ ...addNumbers, name: 'c4', outputSchema: { type: 'nonsense' } })).toContain('FORGE_SCHEMA_INVALID');
    expect(await codes({ ...addNumbers, name: 'c5', implementation: { mode: 'sandbox', code: 'x'.repeat(65 * 1024) + '\nfunction execute() {}' } })).toContain('FORGE_FORGE_LIMIT');
  });

  it('refuses at build a schema over 64 KB of JSON before compiling it (compiling 800 kB held the thread for seconds)', async () => {
    const h = await harness();
    // 3,000 alternatives: ajv would spend seconds on it and then overflow its stack (FORGE_SCHEMA_INVALID).
    const branches = Array.from({ length: 3000 }, (_, i) => ({ type: 'object', properties: { k: { const: `v${i}` } } }));
    const result = await forgeIn(h, { ...addNumbers, name: 'big_schema', inputSchema: { type: 'object', properties: { a: { anyOf: branches } } } });
    expect(result.success).toBe(false);
    expect(result.errors).toEqual([{ code: 'FORGE_FORGE_LIMIT', message: expect.stringMatching(/^inputSchema is \d{6} characters of JSON; the limit is 65536$/), hint: expect.any(String) }]);
    expect(h.registry.has('big_schema')).toBe(false);
    // A schema of 60 KB is forged: the limit leaves room for any schema a tool needs.
    const many = Object.fromEntries(Array.from({ length: 2300 }, (_, i) => [`p${i}`, { type: 'number' }]));
    const large = { ...addNumbers, name: 'wide_schema', inputSchema: { ...addNumbers.inputSchema, properties: { ...addNumbers.inputSchema.properties, ...many } } };
    expect(JSON.stringify(large.inputSchema).length).toBeGreaterThan(55_000);
    expect(JSON.stringify(large.inputSchema).length).toBeLessThan(64 * 1024);
    expect((await forgeIn(h, large)).errors).toEqual([]);
  });

  it("refuses at build a composition whose steps pass arguments the called tool does not take, and registers nothing", async () => {
    const h = await harness();
    const composing = (args: Record<string, unknown>) => ({ ...calcJson, name: 'calc_wrong', implementation: { ...calcJson.implementation, steps: [{ ...calcJson.implementation.steps[0], args }, calcJson.implementation.steps[1]] } });
    const refusal = async (args: Record<string, unknown>) => {
      const result = await forgeIn(h, composing(args));
      expect(result.success).toBe(false);
      expect(h.registry.has('calc_wrong')).toBe(false);
      return result.errors.map(({ code, message, hint }) => ({ code, message, hint }));
    };
    // A name it does not take, and its required one not passed.
    expect(await refusal({ expr: '{expression}' })).toEqual([
      { code: 'FORGE_STEP_ARGS', message: 'implementation.steps[0].args.expr: step "step1" passes "expr", which "math_calculate" does not take', hint: '"math_calculate" takes: expression' },
      { code: 'FORGE_STEP_ARGS', message: 'implementation.steps[0].args: step "step1" does not pass "expression", which "math_calculate" needs', hint: '"math_calculate" takes: expression' },
    ]);
    // A value written out in full that the schema refuses (an empty expression).
    const [wrongValue] = await refusal({ expression: '' });
    expect(wrongValue.code).toBe('FORGE_STEP_ARGS');
    expect(wrongValue.message).toMatch(/^implementation\.steps\[0\]\.args\.expression: step "step1" passes expression="" to "math_calculate": /);
    // A placeholder is judged when the call comes, not here.
    expect((await forgeIn(h, composing({ expression: '{expression}' }))).errors).toEqual([]);
  });

  it('keeps a session-tier tool to its session; another session neither sees nor calls it', async () => {
    const h = await harness();
    expect((await forgeIn(h, addNumbers, 'mcp:first')).success).toBe(true);
    const mine = sessionView({ list: () => h.registry.list(), get: (n: string) => h.registry.get(n), execute: (n: string, a: unknown, o?: any) => h.registry.execute(n, a, o) }, 'mcp:first');
    const theirs = sessionView({ list: () => h.registry.list(), get: (n: string) => h.registry.get(n), execute: (n: string, a: unknown, o?: any) => h.registry.execute(n, a, o) }, 'mcp:second');
    const rest = sessionView({ list: () => h.registry.list(), get: (n: string) => h.registry.get(n), execute: (n: string, a: unknown, o?: any) => h.registry.execute(n, a, o) }, undefined);
    expect(mine.list().map((t) => t.name)).toContain('add_numbers');
    expect(theirs.list().map((t) => t.name)).not.toContain('add_numbers');
    expect(rest.list().map((t) => t.name)).not.toContain('add_numbers');
    expect(await theirs.execute('add_numbers', { a: 1, b: 1 })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
    expect(await mine.execute('add_numbers', { a: 1, b: 1 })).toMatchObject({ ok: true, value: { sum: 2 } });
    // Its name does not leak through a suggestion or a list: a misspelling answers as if it did not exist.
    for (const view of [theirs, rest]) {
      const missed = await view.execute('add_numbrs', { a: 1, b: 1 });
      expect(missed).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
      expect(JSON.stringify(missed)).not.toContain('add_numbers');
      // The same answer but for the name, to the shape: only the time taken differs.
      const answer = async (name: string) => ({ ...(await view.execute(name, {})), durationMs: 0 });
      expect(await answer('add_numbers')).toEqual(await answer('never_made').then((r) => JSON.parse(JSON.stringify(r).replaceAll('never_made', 'add_numbers'))));
    }
    expect(await mine.execute('add_numbrs', {})).toMatchObject({ ok: false, error: { hint: 'did you mean "add_numbers"?' } });
    // Nor can another session compose it, or call it from sandboxed code: the answer is that for a name that exists nowhere.
    const composing = (tool: string, name: string) => ({ ...addNumbers, name, implementation: { mode: 'compose', steps: [{ tool }] } });
    const calling = (tool: string, name: string) => ({ ...addNumbers, name, implementation: { ...addNumbers.implementation, allowlist: [`tool:${tool}`] } });
    for (const request of [composing, calling]) {
      const composed = await forgeIn(h, request('add_numbers', 'add_again'), 'mcp:second');
      expect(composed.errors.map((e) => e.code)).toEqual(['FORGE_TOOL_UNKNOWN']);
      expect(composed).toEqual(JSON.parse(JSON.stringify(await forgeIn(h, request('never_made', 'add_again'), 'mcp:second')).replaceAll('never_made', 'add_numbers')));
    }
    // Names are one namespace for the agent: its name is taken, as a builtin's is, and that is all the answer says.
    const taken = await forgeIn(h, addNumbers, 'mcp:second');
    expect(taken.errors).toEqual([{ code: 'FORGE_TOOL_COLLISION', message: 'a tool named "add_numbers" already exists', hint: 'choose another name' }]);
    expect(taken).toEqual(JSON.parse(JSON.stringify(await forgeIn(h, { ...addNumbers, name: 'uuid_generate' }, 'mcp:second')).replaceAll('uuid_generate', 'add_numbers')));
  });

  it("refuses an agent-tier tool that composes or calls its session's own tool, which every other session would run through it", async () => {
    const h = await harness(tempDir(), { allow_agent_scope: true });
    expect((await forgeIn(h, addNumbers, 'mcp:first')).success).toBe(true);
    const composing = { ...addNumbers, name: 'add_shared', scope: 'agent', implementation: { mode: 'compose', steps: [{ tool: 'add_numbers' }] } };
    const calling = { ...addNumbers, name: 'add_shared', scope: 'agent', implementation: { ...addNumbers.implementation, allowlist: ['tool:add_numbers'] } };
    for (const request of [composing, calling]) {
      const refused = await forgeIn(h, request, 'mcp:first');
      expect(refused.errors).toEqual([expect.objectContaining({ code: 'FORGE_FORGE_SCOPE', message: expect.stringContaining('"add_numbers" is this session\'s own tool') })]);
      expect(h.registry.has('add_shared')).toBe(false);
    }
    // For the session, it may.
    expect((await forgeIn(h, { ...composing, scope: 'session' }, 'mcp:first')).errors).toEqual([]);
  });

  it("tells a session its tools changed when what it sees changed, not when another session forges", async () => {
    const h = await harness();
    const source = { list: () => h.registry.list(), get: (n: string) => h.registry.get(n), execute: (n: string, a: unknown, o?: any) => h.registry.execute(n, a, o), onToolsChanged: (l: () => void) => h.registry.onToolsChanged(l) };
    const told = { first: 0, second: 0, rest: 0 };
    sessionView(source, 'mcp:first').onToolsChanged!(() => told.first++);
    sessionView(source, 'mcp:second').onToolsChanged!(() => told.second++);
    sessionView(source, undefined).onToolsChanged!(() => told.rest++);
    const settled = () => new Promise((resolve) => setTimeout(resolve, 0));
    expect((await forgeIn(h, addNumbers, 'mcp:first')).success).toBe(true);
    expect((await forgeIn(h, { ...addNumbers, name: 'add_wrong', testCases: [{ input: { a: 1, b: 1 }, expectedOutput: { sum: 3 } }] }, 'mcp:first')).success).toBe(false);
    await settled();
    expect(told).toEqual({ first: 1, second: 0, rest: 0 });
    // A tool every session sees (a reload's) is news to each.
    h.registry.register({ name: 'for_everyone', description: 'x', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ({ ok: true, value: 1 }) }, 'tools/x.py');
    await settled();
    expect(told).toEqual({ first: 2, second: 1, rest: 1 });
  });

  it('registers stored tools again after a restart, with their tier and owner', async () => {
    const workDir = tempDir();
    const first = await harness(workDir);
    expect((await forgeIn(first, addNumbers)).success).toBe(true);
    await first.registry.close();
    const second = await harness(workDir);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(second.registry.has('add_numbers')).toBe(true);
    expect(await second.registry.execute('add_numbers', { a: 2, b: 3 }, { session: 'context:one' })).toMatchObject({ ok: true, value: { sum: 5 } });
    expect((second.registry.get('add_numbers') as any).forged).toEqual({ tier: 'session', owner: 'context:one', forgedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('refuses scope: agent unless the policy allows it, and a session-tier forge without a session', async () => {
    const h = await harness();
    expect((await forgeIn(h, { ...addNumbers, scope: 'agent' })).errors[0].code).toBe('FORGE_FORGE_SCOPE');
    const noSession = await h.registry.execute('forge_tool', addNumbers, { timeoutMs: 60_000 });
    expect((noSession as any).value.errors[0].code).toBe('FORGE_FORGE_NO_SESSION');
    const allowed = await harness(tempDir(), { allow_agent_scope: true });
    expect(await forgeIn(allowed, { ...addNumbers, scope: 'agent' })).toMatchObject({ success: true, tier: 'agent' });
    // Every caller sees an agent-tier tool, a caller without a session (REST) too.
    const source = { list: () => allowed.registry.list(), get: (n: string) => allowed.registry.get(n), execute: (n: string, a: unknown, o?: any) => allowed.registry.execute(n, a, o) };
    for (const session of ['context:other', 'mcp:x', undefined]) expect(sessionView(source, session).list().map((t) => t.name)).toContain('add_numbers');
    expect(await sessionView(source, undefined).execute('add_numbers', { a: 1, b: 2 })).toMatchObject({ ok: true, value: { sum: 3 } });
  });

  it('holds the quotas: max_tools and calls per minute', async () => {
    const h = await harness(tempDir(), { max_tools: 1, calls_per_minute: 3 });
    expect((await forgeIn(h, addNumbers)).success).toBe(true);
    expect((await forgeIn(h, { ...addNumbers, name: 'second_tool' })).errors[0]).toMatchObject({ code: 'FORGE_FORGE_QUOTA', message: expect.stringContaining('limit is 1') });
    expect((await forgeIn(h, { ...addNumbers, name: 'third_tool' })).errors[0].code).toBe('FORGE_FORGE_QUOTA');
    expect((await forgeIn(h, { ...addNumbers, name: 'fourth_tool' })).errors[0]).toMatchObject({ code: 'FORGE_FORGE_QUOTA', message: expect.stringContaining('per minute') });
  });

  it('lets sandboxed code call an allowlisted tool through the host, and nothing else', async () => {
    const h = await harness();
    const result = await forgeIn(h, {
      name: 'calc_twice',
      description: 'Compute an expression and double it.',
      inputSchema: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
      outputSchema: { type: 'object' },
      implementation: { mode: 'sandbox', allowlist: ['tool:math_calculate'], code: 'async function execute(input) { const r = await tools.call("math_calculate", { expression: input.expression }); let other; try { await tools.call("uuid_generate", {}); } catch (e) { other = e.message; } return { doubled: r.result * 2, other }; }' },
      testCases: [{ input: { expression: '1+2' }, expectedOutput: { doubled: 6, other: 'tool "uuid_generate" is not in the allowlist (allowed: math_calculate)' } }],
    });
    expect(result.errors).toEqual([]);
    expect(result.success).toBe(true);
  });

  it('lets one of several racing forges of one name win, in bounded rounds', async () => {
    for (let round = 0; round < 3; round++) {
      const h = await harness();
      const results = await Promise.all(Array.from({ length: 4 }, (_, i) => forgeIn(h, addNumbers, `context:racer-${i}`)));
      expect(results.filter((r) => r.success)).toHaveLength(1);
      for (const lost of results.filter((r) => !r.success)) expect(lost.errors[0].code).toBe('FORGE_TOOL_COLLISION');
      expect(await h.registry.execute('add_numbers', { a: 1, b: 1 }, { session: results.findIndex((r) => r.success) >= 0 ? `context:racer-${results.findIndex((r) => r.success)}` : undefined })).toMatchObject({ ok: true, value: { sum: 2 } });
    }
  });

  it('holds every later call to outputSchema, not only the test cases', async () => {
    const h = await harness();
    const request = { ...addNumbers, name: 'add_or_not', implementation: { mode: 'sandbox', code: 'function execute(input) { return input.a === 13 ? { sum: "unlucky" } : { sum: input.a + input.b }; }' } };
    expect((await forgeIn(h, request)).success).toBe(true);
    expect(await h.registry.execute('add_or_not', { a: 13, b: 1 }, { session: 'context:one' })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_OUTPUT', message: expect.stringContaining('does not match outputSchema') } });
  });

  it('answers concurrent calls to one forged tool each with its own result', async () => {
    const h = await harness();
    expect((await forgeIn(h, addNumbers)).success).toBe(true);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => h.registry.execute('add_numbers', { a: i, b: 1000 }, { session: 'context:one' })));
    expect(results.map((r) => (r as { value: { sum: number } }).value.sum)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1000));
  });

  it('stops a forged tool whose buffers grow past its memory (outside the JS heap) with the memory error, and small calls still run', async () => {
    const h = await harness();
    const buffers = {
      name: 'fill_buffers',
      description: 'Fills the given number of 16 MB buffers.',
      inputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
      outputSchema: { type: 'object', properties: { filled: { type: 'integer' } }, required: ['filled'] },
      implementation: { mode: 'sandbox', code: 'function execute(input) { const kept = []; for (let i = 0; i < input.count; i++) kept.push(new Uint8Array(1 << 24).fill(1)); return { filled: kept.length }; }' },
      testCases: [{ input: { count: 1 }, expectedOutput: { filled: 1 } }],
    };
    expect((await forgeIn(h, buffers)).success).toBe(true);
    // 2 GB: far past memory: 48 and node's own allowance; without a data cap it would be allocated.
    const started = performance.now();
    const bomb = await h.registry.execute('fill_buffers', { count: 128 }, { session: 'context:one' });
    expect(bomb).toMatchObject({ ok: false, error: { code: 'FORGE_SANDBOX_MEMORY', message: expect.stringContaining('memory cap of 48 MB') } });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await h.registry.execute('fill_buffers', { count: 2 }, { session: 'context:one' })).toMatchObject({ ok: true, value: { filled: 2 } });
  });
});

/** Sandboxed code that calls math_calculate through the host. */
const calcTwice = {
  name: 'calc_twice',
  description: 'Compute an expression and double it.',
  inputSchema: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  outputSchema: { type: 'object', properties: { doubled: { type: 'number' } }, required: ['doubled'] },
  implementation: { mode: 'sandbox', allowlist: ['tool:math_calculate'], code: 'async function execute(input) { const r = await tools.call("math_calculate", { expression: input.expression }); return { doubled: r.result * 2 }; }' },
  testCases: [{ input: { expression: '1+2' }, expectedOutput: { doubled: 6 } }],
};

const settings = (over: Partial<EmergentSettings>): EmergentSettings => ({ max_tools: 20, memory: 48, timeout: 3, judge: 'deterministic', allow_tools: [], calls_per_minute: 10, allow_agent_scope: false, ...over });

describe('forge_tool: emergent settings narrowed after a tool was forged', () => {
  it('does not register stored tools that use a tool allow_tools no longer allows, nor past max_tools, after a restart', async () => {
    const workDir = tempDir();
    const first = await harness(workDir);
    for (const request of [calcJson, calcTwice, addNumbers]) expect((await forgeIn(first, request)).errors).toEqual([]);
    await first.registry.close();

    const narrowed = await harness(workDir, { allow_tools: ['json_parse'] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(narrowed.registry.has('calc_json')).toBe(false);
    expect(narrowed.registry.has('calc_twice')).toBe(false);
    expect(narrowed.warnings).toContain('forged tool calc_twice is not registered: it uses "math_calculate", which emergent.allow_tools (json_parse) does not allow');
    expect(narrowed.warnings).toContain('forged tool calc_json is not registered: it uses "math_calculate", which emergent.allow_tools (json_parse) does not allow');
    // What uses no tool is still served; a new forge of the refused kind is refused as before.
    expect(await narrowed.registry.execute('add_numbers', { a: 2, b: 3 }, { session: 'context:one' })).toMatchObject({ ok: true, value: { sum: 5 } });
    expect((await forgeIn(narrowed, { ...calcTwice, name: 'calc_again' })).errors[0].code).toBe('FORGE_FORGE_NOT_ALLOWED');
    await narrowed.registry.close();

    const fewer = await harness(workDir, { max_tools: 1 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The oldest forge (calc_json) stays; the newer ones are past the limit.
    expect(fewer.registry.list().filter((t) => 'forged' in t).map((t) => t.name)).toEqual(['calc_json']);
    expect(fewer.warnings).toContain('forged tool add_numbers is not registered: the agent already has 1 forged tools; the limit is 1 (emergent.max_tools)');
  });

  it("refuses a forge of a name the store keeps for a tool it does not serve: the candidate's code was staged over that tool's, and came back under its record, untested", async () => {
    const workDir = tempDir();
    const first = await harness(workDir);
    expect((await forgeIn(first, calcTwice)).errors).toEqual([]);
    await first.registry.close();

    const narrowed = await harness(workDir, { allow_tools: ['json_parse'] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(narrowed.registry.has('calc_twice')).toBe(false);
    // The kept tool's name, code that calls nothing (so allow_tools lets it through), and a test it fails on purpose.
    const swap = { ...calcTwice, implementation: { mode: 'sandbox', code: 'function execute() { return { doubled: 666 }; }' } };
    const refused = await forgeIn(narrowed, swap);
    expect(refused).toMatchObject({ success: false, errors: [{ code: 'FORGE_TOOL_COLLISION', message: 'a tool named "calc_twice" already exists' }] });
    await narrowed.registry.close();

    // allow_tools widened again: the kept tool is served with its own code, the one its tests passed.
    const widened = await harness(workDir);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(readFileSync(join(workDir, '.forge', 'forged', 'calc_twice', 'code.js'), 'utf8')).toBe(calcTwice.implementation.code);
    expect(await widened.registry.execute('calc_twice', { expression: '1+2' }, { session: 'context:one' })).toMatchObject({ ok: true, value: { doubled: 6 } });
    await widened.registry.close();
  });

  it('does not register a stored tool whose schema has a $ref (forged before forge_tool refused it): checking an argument against it could take exponential time', async () => {
    const workDir = tempDir();
    const doubling = { type: 'array', items: { anyOf: [{ allOf: [{ $ref: '#/$defs/n' }, { not: {} }] }, { $ref: '#/$defs/n' }] } };
    const request = { ...addNumbers, name: 'nested_lists', scope: 'session', inputSchema: { type: 'object', properties: { x: { $ref: '#/$defs/n' } }, $defs: { n: doubling } }, testCases: [{ input: { x: [] }, expectedOutput: { sum: 3 } }] } as never;
    new ForgedStore(forgedRoot(workDir)).save({ request, tier: 'session', owner: 'context:one', forgedAt: new Date().toISOString(), verdict: { approved: true, checks: [], reasoning: '' }, testResults: [{ input: { x: [] }, expected: { sum: 3 }, actual: { sum: 3 }, passed: true, durationMs: 1 }] });
    const h = await harness(workDir);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(h.registry.has('nested_lists')).toBe(false);
    expect(h.warnings).toContain('forged tool nested_lists is not registered: inputSchema/properties/x uses $ref, which forge_tool refuses: schemas that reuse each other make checking an argument take exponential time');
    await h.registry.close();
  });

  it('checks the allow_tools in force at every call, and at every tools.call of code already running', async () => {
    const h = await harness();
    for (const request of [calcJson, calcTwice]) expect((await forgeIn(h, request)).errors).toEqual([]);
    expect(await h.registry.execute('calc_twice', { expression: '2+3' }, { session: 'context:one' })).toMatchObject({ ok: true, value: { doubled: 10 } });
    // A dev reload that narrows allow_tools makes a new forge_tool, which puts its settings in force.
    putInForce(h.registry, settings({ allow_tools: ['json_parse'] }));
    for (const [name, args] of [['calc_twice', { expression: '2+3' }], ['calc_json', { expression: '2+3' }]] as const) {
      expect(await h.registry.execute(name, args, { session: 'context:one' })).toMatchObject({
        ok: false,
        error: { code: 'FORGE_FORGE_NOT_ALLOWED', message: `tool "${name}" is not run: it uses "math_calculate", which emergent.allow_tools (json_parse) does not allow`, hint: expect.stringContaining('emergent.allow_tools') },
      });
    }
    putInForce(h.registry, settings({}));
    expect(await h.registry.execute('calc_json', { expression: '6*7' }, { session: 'context:one' })).toMatchObject({ ok: true, value: { result: 42 } });

    // Narrowed while the code runs: its next tools.call is refused.
    h.registry.register({ name: 'narrow_now', description: 'Narrows allow_tools.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => (putInForce(h.registry, settings({ allow_tools: ['narrow_now'] })), ok({})) } as never, 'test');
    const midway = {
      ...calcTwice,
      name: 'narrow_then_calc',
      outputSchema: { type: 'object' },
      implementation: { mode: 'sandbox', allowlist: ['tool:narrow_now', 'tool:math_calculate'], code: 'async function execute() { await tools.call("narrow_now", {}); try { await tools.call("math_calculate", { expression: "1" }); return { refused: null }; } catch (e) { return { refused: e.message }; } }' },
      testCases: [{ input: { expression: 'x' }, expectedOutput: { refused: 'tool "math_calculate" is not one of the tools forged tools may use (emergent.allow_tools: narrow_now)' } }],
    };
    const forged = await forgeIn(h, midway);
    expect(forged.testResults[0].actual).toEqual(midway.testCases[0].expectedOutput);
    expect(forged.success).toBe(true);
  });

  it('does not register a tool synced from the shared state store that uses a tool this replica does not allow', async () => {
    const forgedOn = tempDir();
    const other = await harness(forgedOn, { allow_agent_scope: true });
    for (const request of [calcTwice, addNumbers]) expect((await forgeIn(other, { ...request, scope: 'agent' })).errors).toEqual([]);
    const source = new ForgedStore(forgedRoot(forgedOn));
    const changes: ForgedChange[] = ['calc_twice', 'add_numbers'].map((name, i) => ({ seq: i + 1, record: source.load(name)! }));
    const forged = { add: async () => undefined, since: async (seq: number) => changes.filter((c) => c.seq > seq), remove: async () => false, subscribe: () => () => {}, takeCall: async () => undefined };

    const replica = await harness(tempDir(), { allow_tools: ['json_parse'] });
    try {
      await setActiveState({ shared: true, forged } as unknown as StateStore);
      expect(replica.registry.has('add_numbers')).toBe(true);
      expect(replica.registry.has('calc_twice')).toBe(false);
      expect(replica.warnings).toContain('forged tool calc_twice from the state store is not registered: it uses "math_calculate", which emergent.allow_tools (json_parse) does not allow');
    } finally {
      await setActiveState(undefined);
    }
  });
});

