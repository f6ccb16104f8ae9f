/**
 * A message/stream client that hangs up before its turn ends. The turn runs
 * on (it is the task's, not the connection's), and the SDK saves each of its
 * events only as the stream is read: a stream left at the hang-up left its
 * task `working` for good — GetTask said so after the turn had finished, and
 * the memory store keeps every unfinished task, so each such client grew the
 * process by its task and history. The stream is now read to the turn's end.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import type { MemoryTasks } from '../../../runtime/state/memory-tasks.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

const TOKEN = 'hangup-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

async function tasksOf(url: string, contextId: string): Promise<{ id: string; status: { state: string } }[]> {
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { contextId } }) });
  return ((await response.json()) as any).result.tasks;
}

describe('A2A stream whose client hangs up', () => {
  it('keeps saving the turn: its task ends completed, and the memory store lets it go among the finished', async () => {
    let answer!: () => void;
    const llm = await startScriptedOpenAI([() => new Promise<ScriptedTurn>((resolve) => (answer = () => resolve({ text: 'done' })))]);
    const manifest = { agent_id: 'hangup', version: '1.0.0', description: 'hangup', tools: [], model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry: new ToolRegistry({ workDir: process.cwd() }), workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: TOKEN } });
    running.push(agent);

    let serverSide: Socket | undefined;
    agent.server.once('connection', (socket) => (serverSide = socket));
    const controller = new AbortController();
    const response = await fetch(`${agent.url}/a2a`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message: { kind: 'message', role: 'user', messageId: 'hung-up', contextId: 'left', parts: [{ kind: 'text', text: 'hi' }] } } }),
    });
    await response.body!.getReader().read(); // the task exists
    await waitUntil(() => (llm.bodies.length === 1 ? true : undefined), 5000, 'the turn to reach the model');
    controller.abort();
    // The server sees the hang-up (its task still working) before the model answers.
    await waitUntil(() => (serverSide?.destroyed ? true : undefined), 5000, 'the server to see the connection closed');
    answer();

    const state = await waitUntil(async () => {
      const [task] = await tasksOf(agent.url, 'left');
      return task?.status.state === 'TASK_STATE_COMPLETED' ? task.status.state : undefined;
    }, 5000, 'the task to be saved completed');
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect((agent.state.tasks as unknown as MemoryTasks).retained()).toMatchObject({ running: 0, finished: 1 });
  });
});
