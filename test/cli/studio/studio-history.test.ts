/**
 * A studio page opened again shows the conversation its tab had: the
 * server hands back the stored transcript (/studio/api/history) — the
 * person's messages, the model's text, each tool call with its result, the
 * approval still waited for — and the page puts it in its empty chat.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';
import { startStudioAgent } from '../../helpers/studio.ts';

const TOKEN = 'studio-history-test-token';

describe('the studio restores a conversation', () => {
  it('GET /studio/api/history gives the stored transcript, and the approval it waits for', async () => {
    const llm = await startScriptedOpenAI([
      { text: 'Let me greet Ada.', toolCalls: [{ id: 'call_greet', name: 'greet', arguments: { name: 'Ada' } }, { id: 'call_nope', name: 'nope', arguments: {} }] },
      { text: 'I greeted Ada.' },
      { toolCalls: [{ id: 'call_save', name: 'save_note', arguments: { text: 'eggs' } }] },
    ]);
    const { agent } = await startStudioAgent(llm.url, TOKEN);
    try {
      await agent.waitFor(/studio\s+http/);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const chat = async (text: string) => {
        const response = await fetch(`${agent.url}/studio/api/chat`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ contextId: 'studio-kept', text }) });
        expect(response.status).toBe(200);
        return response.text();
      };
      expect(await chat('Greet Ada')).toContain('event: done');
      expect(await chat('Save a note: eggs')).toContain('input-required');

      const history = await fetch(`${agent.url}/studio/api/history?contextId=studio-kept`, { headers: auth });
      expect(history.status).toBe(200);
      const { items } = (await history.json()) as { items: unknown[] };
      expect(items).toEqual([
        { kind: 'user', text: 'Greet Ada' },
        { kind: 'assistant', text: 'Let me greet Ada.' },
        { kind: 'tool', id: 'call_greet', name: 'greet', arguments: { name: 'Ada' }, category: 'custom', result: { ok: true, value: { greeting: 'Hello, Ada' } } },
        { kind: 'tool', id: 'call_nope', name: 'nope', arguments: {}, result: { ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: 'no tool named "nope"', hint: expect.stringContaining('greet') } } },
        { kind: 'assistant', text: 'I greeted Ada.' },
        { kind: 'user', text: 'Save a note: eggs' },
        { kind: 'approval', requests: [{ callId: 'call_save', tool: 'save_note', arguments: { text: 'eggs' }, reason: 'waiting since an earlier turn' }] },
      ]);

      // Another conversation, and one never used, have nothing; the token is needed as for every studio call.
      expect(((await (await fetch(`${agent.url}/studio/api/history?contextId=studio-other`, { headers: auth })).json()) as { items: unknown[] }).items).toEqual([]);
      expect((await fetch(`${agent.url}/studio/api/history?contextId=studio-kept`)).status).toBe(401);
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it('the page puts the transcript into its chat only while it is empty and of the same conversation', async () => {
    const { restoredChat } = await import(pathToFileURL(join(repoRoot, 'cli/studio/app/restore-chat.js')).href);
    const items = [{ kind: 'user', text: 'hi' }, { kind: 'assistant', text: 'hello' }];
    const empty = { contextId: 'studio-a', items: [], busy: false };
    expect(restoredChat(empty, 'studio-a', items)).toEqual({ ...empty, items });
    // A new chat started, or a message sent, before the transcript arrived: the page keeps what it shows.
    const other = { contextId: 'studio-b', items: [], busy: false };
    expect(restoredChat(other, 'studio-a', items)).toBe(other);
    const started = { contextId: 'studio-a', items: [{ kind: 'user', text: 'new' }], busy: true };
    expect(restoredChat(started, 'studio-a', items)).toBe(started);
  });
});
