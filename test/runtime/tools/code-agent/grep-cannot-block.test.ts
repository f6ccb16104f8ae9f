/**
 * grep_search's JavaScript engine under a hostile pattern: a regex that
 * backtracks catastrophically, over a large file, called over REST on a
 * real server. The call must answer within its timeout (timed_out set),
 * and meanwhile the server must keep answering /healthz quickly: its event
 * loop is never held (the regex runs in a worker thread that is killed).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../../runtime/manifest.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../../runtime/server/serve.ts';
import { silentLogger } from '../../../../runtime/tools/registry.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools } from '../../../helpers/tools.ts';

let agent: RunningAgent;

beforeAll(async () => {
  const work = tempDir('forge-redos-');
  // 20 000 lines that each make (a+)+$ backtrack exponentially (the "!" at the end never matches $ after a's).
  const evil = `${'a'.repeat(40)}!\n`.repeat(20_000);
  writeFileSync(join(work, 'big.txt'), evil);
  writeFileSync(join(work, 'small.txt'), 'needle here\n');
  const harness = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'javascript' } } });
  const manifest = { agent_id: 'redos', version: '1.0.0', description: '', tools: harness.registry.list() } as unknown as AgentManifest;
  agent = await serveAgent({ manifest, registry: harness.registry, workDir: work, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
});

afterAll(async () => {
  await agent?.stop(100);
});

async function timed(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.text();
  expect(response.status).toBe(200);
  return performance.now() - started;
}

describe('a catastrophic regex in the JavaScript grep', () => {
  it('answers within its timeout while /healthz stays fast and the event loop is never held', async () => {
    const loop = monitorEventLoopDelay({ resolution: 5 });
    // The baseline: /healthz on this (possibly loaded) machine before the attack.
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await timed(`${agent.url}/healthz`));
    loop.enable();
    const started = performance.now();
    const call = fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pattern: '(a+)+$', timeout: 2 }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as { ok: boolean; value: { timed_out: boolean; engine: string } }, ms: performance.now() - started }));
    let done = false;
    void call.finally(() => (done = true));
    const during: number[] = [];
    while (!done) during.push(await timed(`${agent.url}/healthz`));
    loop.disable();
    const result = await call;

    expect(result.status).toBe(200);
    expect(result.body.value).toMatchObject({ engine: 'javascript', timed_out: true });
    // Honoured: 2 s asked; a generous margin for a loaded machine, far below the minutes the pattern needs.
    expect(result.ms).toBeLessThan(10_000);
    expect(during.length).toBeGreaterThan(10);
    // The server's thread was never held: no event-loop stall near the 2 s the search ran (before, it was the whole search).
    const maxStallMs = loop.max / 1e6;
    expect(maxStallMs).toBeLessThan(250);
    // /healthz during the attack: the typical answer stays under 50 ms, as before it.
    const sorted = [...during].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const p90 = sorted[Math.floor(sorted.length * 0.9)];
    expect(median).toBeLessThan(50);
    expect(p90).toBeLessThan(Math.max(50, 3 * Math.max(...baseline)));
  });

  it('still finds matches with the same engine afterwards, and reports a bad pattern as a pattern error', async () => {
    const found = await fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pattern: 'needle', path: 'small.txt' }) }).then((r) => r.json());
    expect(found).toMatchObject({ ok: true, value: { matches: [{ path: 'small.txt', line: 1, text: 'needle here' }], timed_out: false } });
    const bad = await fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pattern: '(unclosed' }) }).then((r) => r.json());
    expect(bad).toMatchObject({ ok: false, error: { code: 'FORGE_GREP_PATTERN' } });
  });
});
