/**
 * A schema someone else wrote (a forge request's inputSchema, an MCP
 * server's) is checked on the server's one thread, against arguments the
 * attacker sends too. `uniqueItems: true` was checked by comparing every
 * pair of items: one call with 100,000 distinct items (under a megabyte)
 * held every front end for minutes. Schemas that reuse each other through
 * `$ref` make the work exponential in a small argument: a definition whose
 * items are anyOf [allOf [itself, not {}], itself] checks both branches at
 * every level, twice the work per level (22 levels took a quarter second,
 * 40 take days), so forge_tool refuses $ref. The built bundle here is
 * attacked over REST by a token holder (approved by default), who forges
 * the tools and calls them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { startForgingAgent, type ForgingAgent } from '../helpers/forging-agent.ts';

let agent: AgentProcess;
let call: ForgingAgent['call'];

beforeAll(async () => {
  ({ agent, call } = await startForgingAgent('unique', ['math_calculate']));
}, 120_000);

afterAll(async () => {
  // SIGKILL: were a pairwise check holding the server again, SIGTERM would wait on it past the hook's timeout.
  await agent?.stop('SIGKILL');
});


describe('uniqueItems in a forged tool\'s inputSchema', () => {
  it('is checked without comparing every pair: a call with 100,000 distinct items is answered, and others meanwhile; a duplicate (keys in another order) is still refused', async () => {
    const forged = await call('forge_tool', {
      name: 'distinct_rows',
      description: 'Counts rows that must all differ.',
      scope: 'agent',
      inputSchema: { type: 'object', properties: { rows: { type: 'array', uniqueItems: true } }, required: ['rows'] },
      outputSchema: { type: 'object' },
      implementation: { mode: 'sandbox', code: 'function execute(input) { return { rows: input.rows.length }; }' },
      testCases: [{ input: { rows: [[1], [2]] }, expectedOutput: { rows: 2 } }],
    });
    expect(forged.body).toMatchObject({ ok: true, value: { success: true } });
    const rows = Array.from({ length: 100_000 }, (_, i) => [i]);
    const counting = call('distinct_rows', { rows });
    const health = await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    expect(await counting).toMatchObject({ status: 200, body: { ok: true, value: { rows: 100_000 } } });
    const duplicate = await call('distinct_rows', { rows: [{ a: 1, b: 2 }, { c: 3 }, { b: 2, a: 1 }] });
    expect(duplicate).toMatchObject({ status: 400, body: { ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('must NOT have duplicate items (items ## 0 and 2 are identical)') } } });
  }, 60_000);
});

describe('$ref in a forge request\'s schemas', () => {
  const request = (name: string, inputSchema: Record<string, unknown>) => ({
    name,
    description: 'Takes nested lists.',
    scope: 'agent',
    inputSchema,
    outputSchema: { type: 'object' },
    implementation: { mode: 'sandbox', code: 'function execute(input) { return {}; }' },
    testCases: [{ input: { x: [[]] }, expectedOutput: {} }],
  });
  const doubling = { type: 'array', items: { anyOf: [{ allOf: [{ $ref: '#/$defs/n' }, { not: {} }] }, { $ref: '#/$defs/n' }] } };

  it.each([
    ['at a property', 'nested_lists', { type: 'object', properties: { x: { $ref: '#/$defs/n' } }, $defs: { n: doubling } }, '/properties/x'],
    ['at a property named "default"', 'nested_defaults', { type: 'object', properties: { default: { $ref: '#/$defs/n' }, x: { type: 'array' } }, $defs: { n: doubling } }, '/properties/default'],
  ])('is refused %s, naming where, before any argument is checked against it', async (_where, name, inputSchema, at) => {
    const refused = await call('forge_tool', request(name, inputSchema));
    expect(refused.body).toMatchObject({ ok: true, value: { success: false, errors: [{ code: 'FORGE_SCHEMA_INVALID', message: expect.stringContaining(`inputSchema${at}: a $ref reuses a schema`) }] } });
  }, 60_000);

  it('is data in a default value, and the tool is forged', async () => {
    const forged = await call('forge_tool', request('ref_in_default', { type: 'object', properties: { x: { type: 'array', default: [{ $ref: '#' }] } } }));
    expect(forged.body).toMatchObject({ ok: true, value: { success: true } });
  }, 60_000);
});
