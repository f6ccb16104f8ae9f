/**
 * Two replicas of a built bundle whose connections to a real PostgreSQL go
 * through a relay the test takes down: the store away, as in a restart or a
 * failover. The log says so once per outage and says when it is over (not
 * once a second); A2A, REST and MCP answer FORGE_STATE_UNAVAILABLE with a
 * hint to retry, and the log has one line for each, no stack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../../helpers/agent-process.ts';
import { auth, callTool, startReplica } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { deployBundle, forge, minimalConfig, writeProject } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../../helpers/scripted-llm.ts';
import { relay } from '../../helpers/tcp-relay.ts';

let postgres: TestPostgres;
let llm: ScriptedServer;
let gate: Awaited<ReturnType<typeof relay>>;
/** FORGE_VERBOSE: its debug lines count the scheduler's failed checks. */
let verbose: AgentProcess;
let quiet: AgentProcess;

beforeAll(async () => {
  [postgres, llm] = await Promise.all([startPostgres(), startScriptedOpenAI(Array.from({ length: 1000 }, () => ({ text: 'hello' })))]);
  const project = writeProject({ 'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\ntools:\n  - schedule_list\n`) });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  const { bundle } = deployBundle(project);
  const database = await postgres.createDatabase(`outage_${process.pid}`);
  gate = await relay(postgres.port);
  const stateUrl = database.replace(`:${postgres.port}/`, `:${gate.port}/`);
  [verbose, quiet] = await Promise.all([
    startReplica({ bundle, stateUrl, publicUrl: 'http://127.0.0.1:9', env: { FORGE_VERBOSE: '1' } }),
    startReplica({ bundle, stateUrl, publicUrl: 'http://127.0.0.1:9' }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([verbose, quiet].map((replica) => replica?.stop('SIGKILL')));
  await gate?.close();
  await postgres?.stop();
});

const count = (text: string, pattern: RegExp) => text.split('\n').filter((line) => pattern.test(line)).length;
/** A line of a stack trace: what a user's log must not show without --verbose. */
const STACK_FRAME = /^\s+at /;

async function rpc(url: string, method: string, params: unknown): Promise<any> {
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return response.json();
}

describe('with the state store away', () => {
  it('warns once per outage that scheduled tasks cannot be checked, however many checks fail, and says when they work again', async () => {
    const before = verbose.output().length;
    gate.down();
    try {
      // The third failed check in a row, counted by its debug line: several checks failed, one warned.
      await verbose.waitFor(/scheduler: cannot check scheduled tasks: still failing \(3 times\)/, 20_000);
    } finally {
      gate.up();
    }
    await verbose.waitFor(/scheduler: checking scheduled tasks again, after \d+ failed attempts/, 20_000);
    const outage = verbose.output().slice(before);
    expect(count(outage, /\[forge\] warning: scheduler:/), outage).toBe(1);
    expect(count(outage, /^\[forge\] warning: scheduler: cannot check scheduled tasks: .*; checks go on every second, and a line will say when they work again$/), outage).toBe(1);
  }, 60_000);

  it('answers an A2A message, a task lookup, a REST call and an MCP call with FORGE_STATE_UNAVAILABLE and a hint to retry, one log line each and no stack', async () => {
    const before = quiet.output().length;
    gate.down();
    try {
      const sent = await rpc(quiet.url, 'message/send', { message: { kind: 'message', role: 'user', messageId: `outage-${process.pid}`, parts: [{ kind: 'text', text: 'hi' }], contextId: 'outage' } });
      // The driver's words ("connect ECONNREFUSED …") are for the log, not the client.
      expect(sent.error).toMatchObject({ message: 'the state store cannot be reached right now', data: { code: 'FORGE_STATE_UNAVAILABLE', hint: expect.stringContaining('retry') } });

      // Past the SDK's own mapping: the task store fails inside the SDK's tasks/get.
      const lookedUp = await rpc(quiet.url, 'tasks/get', { id: 'no-such-task' });
      expect(lookedUp.error).toMatchObject({ data: { code: 'FORGE_STATE_UNAVAILABLE', hint: expect.stringContaining('retry') } });

      const rest = await callTool(quiet.url, 'schedule_list', {});
      expect(rest.status).toBe(503);
      expect(rest.retryAfter).toBe('1');
      expect(rest.body.error).toMatchObject({ code: 'FORGE_STATE_UNAVAILABLE', message: 'tool "schedule_list" failed: the state store cannot be reached right now', hint: expect.stringContaining('retry') });

      const mcp = await fetch(`${quiet.url}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'schedule_list', arguments: {} } }),
      });
      const called = (await mcp.json()) as any;
      expect(called.result.isError).toBe(true);
      expect(called.result.content[0].text).toMatch(/^FORGE_STATE_UNAVAILABLE: .*state store cannot be reached[\s\S]*hint: .*retry/);
      // An outage the scheduler saw too, so that its end is a line to wait for.
      await quiet.waitFor(/scheduler: cannot check scheduled tasks/, 20_000);
    } finally {
      gate.up();
    }
    await quiet.waitFor(/scheduler: checking scheduled tasks again/, 20_000);
    const outage = quiet.output().slice(before);
    expect(count(outage, /^\[forge\] warning: a2a: message\/send answered FORGE_STATE_UNAVAILABLE: the state store cannot be reached \(/), outage).toBe(1);
    expect(count(outage, /^\[forge\] warning: a2a: tasks\/get answered FORGE_STATE_UNAVAILABLE/), outage).toBe(1);
    expect(count(outage, /^\[forge\] warning: tool schedule_list failed over REST \(FORGE_STATE_UNAVAILABLE\)/), outage).toBe(1);
    expect(outage).not.toContain('Event processing loop failed');
    expect(count(outage, STACK_FRAME), outage).toBe(0);
    // Every line is Forge's own: none of the SDK's unprefixed console lines.
    expect(outage.split('\n').filter((line) => line && !line.startsWith('[forge] ')), outage).toEqual([]);

    // Back: a message goes through again.
    const sent = await rpc(quiet.url, 'message/send', { message: { kind: 'message', role: 'user', messageId: `after-${process.pid}`, parts: [{ kind: 'text', text: 'hi' }], contextId: 'after' } });
    expect(sent.result?.status?.state, JSON.stringify(sent)).toBe('completed');
  }, 60_000);
});
