/**
 * A regular expression someone else wrote runs on the server's one thread:
 * a forge request whose inputSchema says `pattern: "^(a+)+$"`, with a test
 * input of forty a's and a "!", held every front end, /healthz and SIGTERM
 * while ajv backtracked. The built bundle here is attacked over REST by a
 * token holder (approved by default); the server must answer everyone
 * meanwhile, and a pattern only a backtracking engine can run is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { startForgingAgent, type ForgingAgent } from '../helpers/forging-agent.ts';

let agent: AgentProcess;
let call: ForgingAgent['call'];

beforeAll(async () => {
  ({ agent, call } = await startForgingAgent('regexp', ['math_calculate']));
}, 120_000);

afterAll(async () => {
  // SIGKILL: were a runaway match holding the server again, SIGTERM would wait on it past the hook's timeout.
  await agent?.stop('SIGKILL');
});

const forgeRequest = (name: string, pattern: string, input: string) => ({
  name,
  description: 'Echoes nothing.',
  scope: 'agent',
  inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] },
  outputSchema: { type: 'object' },
  implementation: { mode: 'sandbox', code: 'function execute(input) { return {}; }' },
  testCases: [{ input: { s: input }, expectedOutput: {} }],
});


describe('a regular expression from a forge request', () => {
  it('that backtracks without bound does not hold the server: others are answered meanwhile, and so is the forge', async () => {
    const forging = call('forge_tool', forgeRequest('nested_quantifier', '^(a+)+$', `${'a'.repeat(40)}!`));
    // Asked while the forge validates its test input: answered in time, not after the backtracking.
    const health = await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    expect(await call('math_calculate', { expression: '1+1' })).toMatchObject({ status: 200, body: { ok: true } });
    // The test input does not match the pattern: the forge fails its test, in time.
    const forged = await forging;
    expect(forged.body).toMatchObject({ ok: true, value: { success: false } });
    expect(JSON.stringify(forged.body.value.testResults)).toContain('pattern');
  }, 60_000);

  it.each([
    ['a backreference', '^(a+)+\\1$'],
    ['a lookahead', '^(?=a)(a+)+$'],
    ['a lookbehind', '(?<!b)(a+)+$'],
    ['a Unicode property escape (the u flag)', '^(\\p{L}+)+$'],
  ])('that uses %s (which only the backtracking engine runs) is refused when forged, naming the pattern', async (what, pattern) => {
    const refused = await call('forge_tool', forgeRequest('backtracking_only', pattern, 'aaa'));
    expect(refused.body).toMatchObject({ ok: true, value: { success: false, errors: [{ code: 'FORGE_SCHEMA_INVALID', message: expect.stringContaining(`uses ${what.startsWith('a Unicode') ? 'a Unicode property or code point escape' : what === 'a backreference' ? 'a backreference' : 'a lookaround'}`) }] } });
    expect(refused.body.value.errors[0].message).toContain(JSON.stringify(pattern));
  }, 60_000);

  it('is looked for where schemas are: a field named "pattern" in a default or an example is data, and the tool is forged', async () => {
    const request = forgeRequest('data_pattern', '^[a-z]+$', 'abc');
    request.inputSchema.properties = {
      ...request.inputSchema.properties,
      filter: { type: 'object', default: { pattern: '^(?=a)(a+)+\\1$' }, examples: [{ pattern: '(?<!b)a' }] },
    } as typeof request.inputSchema.properties;
    const forged = await call('forge_tool', request);
    expect(forged.body).toMatchObject({ ok: true, value: { success: true } });
  }, 60_000);
});
