/**
 * json_parse's JMESPath query against a running bundle, as an attacker (any token holder, or a model a
 * prompt steers) sends it: `[@,…][].[@,…]…` made 10⁹ items from the text `1` in 248 bytes and killed
 * the server with an out-of-memory abort; one step fewer held every front end for seconds. The query's
 * budget (runtime/tools/builtin/json/bounded-query.ts) makes each an error result while the agent goes
 * on answering, over REST and over MCP.
 */
import { search } from '@jmespath-community/jmespath';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forge, tempDir, writeProject } from '../helpers/project.ts';

const TOKEN = 'json-query-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const TENFOLD = '[@,@,@,@,@,@,@,@,@,@]';
/** 10^(steps+1) items from one number. */
const multiplying = (steps: number) => `${TENFOLD}${`[].${TENFOLD}`.repeat(steps)} | length(@)`;

let agent: AgentProcess;

beforeAll(async () => {
  const project = writeProject({ 'forge.yaml': 'agent_id: json-query\nversion: 1.0.0\ndescription: Parses JSON.\ntools: [json_parse, math_calculate]\n' });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stdout + built.stderr).toBe(0);
  agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN } });
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
});

/** Generous for a loaded machine; what it guards against killed the process, or held it for seconds a call. */
const IN_TIME = 15_000;
const rest = (body: unknown) =>
  fetch(`${agent.url}/tools/json_parse`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(IN_TIME) }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
const mcp = (args: unknown) =>
  fetch(`${agent.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'json_parse', arguments: args } }),
    signal: AbortSignal.timeout(IN_TIME),
  }).then(async (res) => ((await res.json()) as any).result);

async function stillServing(): Promise<void> {
  expect(agent.child.exitCode).toBeNull();
  expect((await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(IN_TIME) })).status).toBe(200);
  const sum = await fetch(`${agent.url}/tools/math_calculate`, { method: 'POST', headers, body: '{"expression":"1+1"}', signal: AbortSignal.timeout(IN_TIME) });
  expect(await sum.json()).toMatchObject({ ok: true });
}

describe('a JMESPath query that multiplies its value tenfold per step', () => {
  it('is an error result over REST, for the query that killed the server and the one that held it, and the agent serves on', async () => {
    for (const steps of [8, 6]) {
      const { body } = await rest({ text: '1', query: multiplying(steps) });
      expect(body).toMatchObject({ ok: false, error: { code: 'FORGE_JSON_QUERY_LIMIT', message: expect.stringContaining('stopped') } });
      await stillServing();
    }
  }, 60_000);

  it('is an error result over MCP, several at once, and the agent serves on', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => mcp({ text: '1', query: multiplying(8) })));
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('FORGE_JSON_QUERY_LIMIT');
    }
    await stillServing();
  }, 60_000);

  it('still answers a query within the budget, as the library does', async () => {
    const { body } = await rest({ text: '[1,2,3]', query: multiplying(3) });
    expect(body).toMatchObject({ ok: true, value: { value: search([1, 2, 3], multiplying(3)) } });
  });
});
