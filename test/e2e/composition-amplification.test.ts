/**
 * A forged composition's templates are the model's (or a token holder's):
 * twenty json_parse steps, each passing on two copies of the last one's
 * value, made a 1,000-character argument half a gigabyte, and two such calls
 * ran the server out of memory (a crash no error result can answer). The
 * built bundle here is attacked over REST by a token holder (approved by
 * default), who forges the composition and calls it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { startForgingAgent, type ForgingAgent } from '../helpers/forging-agent.ts';

let agent: AgentProcess;
let call: ForgingAgent['call'];

beforeAll(async () => {
  ({ agent, call } = await startForgingAgent('doubling', ['json_parse']));
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
});


/** Step i parses a JSON string holding two copies of step i-1's value: the value doubles at each step. */
const STEPS = 20;
const steps = [{ tool: 'json_parse', args: { text: '{t}' }, output_var: 's0' }];
for (let i = 1; i < STEPS; i++) steps.push({ tool: 'json_parse', args: { text: `"{s${i - 1}.value}{s${i - 1}.value}"` }, output_var: `s${i}` });

describe('a forged composition that doubles a value at every step', () => {
  it('is stopped at its values\' limit with an error result, and the server carries on', async () => {
    const forged = await call('forge_tool', {
      name: 'doubled',
      description: 'Doubles a text nineteen times.',
      scope: 'agent',
      inputSchema: { type: 'object', properties: { t: { type: 'string' } }, required: ['t'] },
      outputSchema: { type: 'string' },
      implementation: { mode: 'compose', steps, output: `{s${STEPS - 1}.value}` },
      // Half a million characters at the end, 1.5 million passed along in all: within the limit.
      testCases: [{ input: { t: '"a"' }, expectedOutput: 'a'.repeat(2 ** (STEPS - 1)) }],
    });
    expect(forged.body).toMatchObject({ ok: true, value: { success: true } });
    // Ten characters would end as five million, fifteen million passed along.
    const doubled = await call('doubled', { t: `"${'x'.repeat(10)}"` });
    expect(doubled).toMatchObject({ status: 422, body: { ok: false, error: { code: 'FORGE_TOOL_OUTPUT_LIMIT', message: expect.stringContaining('tool "doubled" put more than 4194304 characters of values into its steps\' arguments and its output in one call') } } });
    expect((await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
  }, 60_000);
});
