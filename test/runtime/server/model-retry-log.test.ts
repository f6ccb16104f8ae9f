/**
 * The log lines of a model asked again (a 429, a 5xx) and of a fallback name the task and the
 * conversation they were for, as the task's own lines do: with tracing off a line carries no
 * trace id, and with several turns in flight an operator could not tell whose call it was.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const TOKEN = 'retry-log-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

describe('a model asked again, tracing off', () => {
  it('is logged with the task and the context it was for, and so is the fallback after it', async () => {
    // Refused (429, "try again at once") three times: asked again twice, then the fallback answers.
    const refused = { status: 429, text: 'rate limited', headers: { 'retry-after-ms': '0' } };
    const main = await startScriptedOpenAI([refused, refused, refused]);
    const backup = await startScriptedOpenAI([{ text: 'done' }]);
    const model = { provider: 'openai', name: 'scripted', base_url: `${main.url}/v1`, fallbacks: [{ provider: 'openai', name: 'backup', base_url: `${backup.url}/v1` }] };
    const manifest = { agent_id: 'retrying', version: '1.0.0', description: '', tools: [], model } as unknown as AgentManifest;
    const logs: string[] = [];
    const log = { debug: () => {}, info: () => {}, warn: (m: string) => logs.push(m) };
    const dir = tempDir();
    const agent = await serveAgent({ manifest, registry: new ToolRegistry({ workDir: dir }), workDir: dir, host: '127.0.0.1', port: 0, http: new HttpClient(), log, env: { FORGE_AUTH_TOKEN: TOKEN, OPENAI_API_KEY: 'k' } });
    running.push(agent);

    const message = { kind: 'message', messageId: 'm1', role: 'user', contextId: 'ctx-busy', parts: [{ kind: 'text', text: 'hello' }] };
    const response = await fetch(`${agent.url}/a2a`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message } }) });
    const task = ((await response.json()) as { result: { id: string; status: { state: string } } }).result;
    expect(task.status.state).toBe('completed');

    const retries = logs.filter((line) => line.includes('asking it again'));
    expect(retries).toHaveLength(2);
    for (const line of retries) expect(line).toMatch(new RegExp(`^model openai:scripted failed for task ${task.id} \\(context ctx-busy\\), asking it again in 0\\.0 s: `));
    expect(logs.find((line) => line.includes('trying the next'))).toMatch(new RegExp(`^model openai:scripted failed for task ${task.id} \\(context ctx-busy\\), trying the next: `));
  });
});
