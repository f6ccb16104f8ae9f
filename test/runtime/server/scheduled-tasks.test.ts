import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent } from '../../../runtime/server/serve.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

async function waitFor<T>(probe: () => T | undefined, ms = 8000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The history's complete lines. The file exists (created by the append) a
 * moment before its first line is in it: reading then must mean "not yet",
 * not a JSON error.
 */
function historyRecords(file: string): any[] | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  const records = complete.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return records.length ? records : undefined;
}

describe('scheduled tasks in a running agent', () => {
  it('gives a due task to the model in its own conversation and records the firing', async () => {
    const llm = await startScriptedOpenAI([{ text: 'tock' }, { text: 'tock again' }]);
    const workDir = tempDir();
    const manifest = {
      agent_id: 'sched', version: '1.0.0', description: '', tools: [],
      model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` },
      schedules: [{ id: 'tick', cron: '@every 1s', task: 'Say tick.' }],
    } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry: new ToolRegistry({ workDir }), workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    try {
      const history = join(workDir, '.forge', 'schedule-history.jsonl');
      const record = await waitFor(() => historyRecords(history)?.find((r) => r.status === 'ok'));
      expect(record).toMatchObject({ id: 'tick', source: 'config', status: 'ok' });
      expect(llm.bodies[0].messages.at(-1)).toEqual({ role: 'user', content: 'Say tick.' });
      expect(existsSync(join(workDir, '.forge', 'sessions', 'schedule-tick.json'))).toBe(true);
    } finally {
      await agent.stop(100);
    }
  });

  it('records a firing as failed when no model is configured', async () => {
    const workDir = tempDir();
    const manifest = { agent_id: 'sched', version: '1.0.0', description: '', tools: [], schedules: [{ id: 'tick', cron: '@every 1s', task: 'x' }] } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry: new ToolRegistry({ workDir }), workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    try {
      const history = join(workDir, '.forge', 'schedule-history.jsonl');
      const record = await waitFor(() => historyRecords(history)?.[0]);
      expect(record).toMatchObject({ id: 'tick', status: 'failed' });
      expect(record.error).toContain('no model configured');
    } finally {
      await agent.stop(100);
    }
  });
});
