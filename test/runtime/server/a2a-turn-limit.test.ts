/**
 * How many A2A turns one process runs or queues at once (FORGE_MAX_TURNS).
 * A message sent with `blocking: false` (v0.3) or `returnImmediately` (v1.0)
 * is answered as soon as its task exists, and its turn runs on; so does the
 * turn of a client that hangs up. Without a cap, one client with the token
 * starts turns (model calls, memory, a place in a conversation's queue)
 * without holding a connection for any of them. Past the cap a message is
 * refused at once: JSON-RPC -32000, data.code FORGE_AGENT_BUSY, with a hint.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

const TOKEN = 'turn-limit-token';
const running: { agent: RunningAgent; answerAll: () => void }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.answerAll();
    await r.agent.stop(100);
  }
});

/** An agent whose model holds every call until the test answers it. */
async function startAgent(maxTurns: string) {
  const waiting: (() => void)[] = [];
  let answered = false;
  const held = (): Promise<ScriptedTurn> => new Promise((resolve) => (answered ? resolve({ text: 'done' }) : waiting.push(() => resolve({ text: 'done' }))));
  const llm = await startScriptedOpenAI(Array.from({ length: 20 }, () => held));
  const registry = new ToolRegistry({ workDir: process.cwd() });
  const manifest = { agent_id: 'turn-limit', version: '1.0.0', description: 'turns', tools: [], model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_MAX_TURNS: maxTurns } });
  const answerAll = () => {
    answered = true;
    for (const answer of waiting.splice(0)) answer();
  };
  running.push({ agent, answerAll });
  return { agent, llm, answerOne: () => waiting.shift()?.(), answerAll };
}

let ids = 0;
async function rpc(url: string, method: string, params: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++ids, method, params }) });
  expect(response.status).toBe(200);
  return response.json();
}

/** v0.3 message/send that returns as soon as its task exists. */
const sendAndGo = (url: string, contextId: string) => rpc(url, 'message/send', { message: { kind: 'message', role: 'user', messageId: `m-${++ids}`, contextId, parts: [{ kind: 'text', text: 'hi' }] }, configuration: { blocking: false } });

describe('A2A turns per process', () => {
  it('refuses a message past FORGE_MAX_TURNS while earlier non-blocking turns still run, and takes one again once a turn ends', async () => {
    const { agent, llm, answerOne } = await startAgent('2');
    const first = await sendAndGo(agent.url, 'ctx-a');
    const second = await sendAndGo(agent.url, 'ctx-b');
    expect(first.result?.id).toBeDefined();
    expect(second.result?.id).toBeDefined();
    await waitUntil(() => (llm.bodies.length === 2 ? true : undefined), 20_000, 'both turns to reach the model');

    const third = await sendAndGo(agent.url, 'ctx-c');
    expect(third.result).toBeUndefined();
    expect(third.error).toMatchObject({ code: -32000, data: { code: 'FORGE_AGENT_BUSY' } });
    expect(third.error.data.hint).toMatch(/FORGE_MAX_TURNS/);
    // Refused before its turn started: the model was never asked.
    expect(llm.bodies.length).toBe(2);

    // The model answers the call it got first, which may be either turn's.
    answerOne();
    const oneEnded = async () => {
      for (const sent of [first, second]) if ((await rpc(agent.url, 'tasks/get', { id: sent.result.id })).result?.status?.state === 'completed') return true;
      return undefined;
    };
    await waitUntil(oneEnded, 20_000, 'one of the two turns to end');
    const fourth = await sendAndGo(agent.url, 'ctx-d');
    expect(fourth.error).toBeUndefined();
    expect(fourth.result?.id).toBeDefined();
  });

  it('counts the messages waiting in a conversation\'s queue, so one conversation cannot queue without end', async () => {
    const { agent, llm } = await startAgent('2');
    expect((await sendAndGo(agent.url, 'same')).error).toBeUndefined();
    await waitUntil(() => (llm.bodies.length === 1 ? true : undefined), 20_000, 'the first turn to reach the model');
    // Waits behind the first turn of its conversation: no model call yet, but a turn all the same.
    expect((await sendAndGo(agent.url, 'same')).error).toBeUndefined();
    const third = await sendAndGo(agent.url, 'same');
    expect(third.error).toMatchObject({ code: -32000, data: { code: 'FORGE_AGENT_BUSY' } });
  });

  it('counts a streamed turn whose client hung up', async () => {
    const { agent, llm } = await startAgent('1');
    const controller = new AbortController();
    const response = await fetch(`${agent.url}/a2a`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message: { kind: 'message', role: 'user', messageId: 'streamed', contextId: 'gone', parts: [{ kind: 'text', text: 'hi' }] } } }),
    });
    expect(response.headers.get('content-type')).toMatch(/event-stream/);
    await waitUntil(() => (llm.bodies.length === 1 ? true : undefined), 20_000, 'the streamed turn to reach the model');
    controller.abort();
    const next = await sendAndGo(agent.url, 'other');
    expect(next.error).toMatchObject({ code: -32000, data: { code: 'FORGE_AGENT_BUSY' } });
  });
});
