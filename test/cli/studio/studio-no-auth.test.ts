/**
 * The studio of `forge run --dev --no-auth` is open to anything that reaches
 * it, so its API is held to what the agent's own endpoints are: a POST body
 * a web page could send without a preflight (text/plain, a form) is refused.
 * /studio/api/approve is a person's answer to an approval; a page that could
 * post it would approve the agent's write calls for them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';
import { startStudioAgent } from '../../helpers/studio.ts';

describe('the studio without a token', () => {
  it('refuses an approval posted as text/plain (a cross-site simple request), and takes the page\'s own JSON one', async () => {
    const llm = await startScriptedOpenAI([{ toolCalls: [{ id: 'call_save', name: 'save_note', arguments: { text: 'eggs' } }] }, { text: 'Saved.' }]);
    const { agent, project } = await startStudioAgent(llm.url, undefined);
    try {
      await agent.waitFor(/studio\s+http/);
      const post = (path: string, contentType: string, body: unknown) => fetch(`${agent.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body: JSON.stringify(body) });
      expect(await (await post('/studio/api/chat', 'application/json', { contextId: 'studio-x', text: 'Save a note: eggs' })).text()).toContain('input-required');

      const forged = await post('/studio/api/approve', 'text/plain;charset=UTF-8', { contextId: 'studio-x', answers: { call_save: true } });
      expect(forged.status).toBe(415);
      expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('FORGE_CONTENT_TYPE');
      expect((await post('/studio/api/chat', 'application/x-www-form-urlencoded', { contextId: 'studio-y', text: 'hi' })).status).toBe(415);
      expect(existsSync(join(project, 'notes.txt'))).toBe(false);

      // The page's own request (application/json) is served.
      const approved = await post('/studio/api/approve', 'application/json', { contextId: 'studio-x', answers: { call_save: true } });
      expect(await approved.text()).toContain('event: done');
      expect(existsSync(join(project, 'notes.txt'))).toBe(true);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
