/**
 * json_parse's JMESPath query against a running bundle, as an attacker (any token holder, or a model a
 * prompt steers) sends it: `[@,…][].[@,…]…` made 10⁹ items from the text `1` in 248 bytes and killed
 * the server with an out-of-memory abort; one step fewer held every front end for seconds. The query's
 * budget (runtime/tools/builtin/json/bounded-query.ts) makes each an error result while the agent goes
 * on answering, over REST and over MCP.
 */
import { search } from '@jmespath-community/jmespath';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProject } from '../helpers/project.ts';
import { IN_TIME, serveBuiltBundle, type ServedBundle } from '../helpers/served-bundle.ts';

const TOKEN = 'json-query-token';
const TENFOLD = '[@,@,@,@,@,@,@,@,@,@]';
/** 10^(steps+1) items from one number. */
const multiplying = (steps: number) => `${TENFOLD}${`[].${TENFOLD}`.repeat(steps)} | length(@)`;

let served: ServedBundle;

beforeAll(async () => {
  const project = writeProject({ 'forge.yaml': 'agent_id: json-query\nversion: 1.0.0\ndescription: Parses JSON.\ntools: [json_parse, math_calculate]\n' });
  served = await serveBuiltBundle(project, TOKEN, ['build', '--prod']);
}, 120_000);

afterAll(async () => {
  await served?.agent.stop('SIGKILL');
});

const rest = (body: unknown) => served.rest('json_parse', body);
const mcp = (args: unknown) => served.mcp('json_parse', args);

async function stillServing(): Promise<void> {
  expect(served.agent.child.exitCode).toBeNull();
  expect((await fetch(`${served.agent.url}/healthz`, { signal: AbortSignal.timeout(IN_TIME) })).status).toBe(200);
  expect((await served.rest('math_calculate', { expression: '1+1' })).body).toMatchObject({ ok: true });
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
