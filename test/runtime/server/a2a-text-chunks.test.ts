/**
 * How an answer's text streams out over A2A. The SDK saves the task at every
 * artifact event, loading and copying it whole, parts and all: one event per
 * piece of the model's stream made a turn's cost grow with the square of its
 * pieces (2,000 pieces took 8 s of the server's one thread, 4,000 took 32 s,
 * and every other client waited). The pieces are gathered into chunks sent at
 * a pace instead: the first at once, then at most one every 50 ms, the gap
 * growing on a long answer; the text is the same.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const TOKEN = 'text-chunks-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

describe('A2A answer text', () => {
  it('streams a 4,000-piece answer whole, in a few chunks rather than an event (and a save of the whole task) per piece', async () => {
    // The scripted model sends its text in pieces of 5 characters: 4,000 pieces, all at once.
    const text = 'abcd '.repeat(4000);
    const llm = await startScriptedOpenAI([{ text }]);
    const manifest = { agent_id: 'chunks', version: '1.0.0', description: 'chunks', tools: [], model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry: new ToolRegistry({ workDir: process.cwd() }), workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: TOKEN } });
    running.push(agent);

    const response = await fetch(`${agent.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message: { kind: 'message', role: 'user', messageId: 'long', parts: [{ kind: 'text', text: 'talk' }] } } }),
    });
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)).result);
    const updates = events.filter((e) => e?.kind === 'artifact-update');
    const chunks = updates.filter((e) => !e.lastChunk);
    const streamed = chunks.map((e) => e.artifact.parts.map((p: { text: string }) => p.text).join('')).join('');
    expect(streamed).toBe(text);
    expect(chunks.length).toBeLessThan(50);
    expect(updates.at(-1).artifact.parts[0].text).toBe(text);
    expect(events.at(-1).status.state).toBe('completed');
  });
});
