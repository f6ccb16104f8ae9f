/**
 * A signal that outlives a call (a turn's, a client's, a batch's) keeps no
 * abort listener of the calls made under it once they have ended: 50 calls
 * through each runtime path that listens to one leave it with none, and a
 * batch of MCP calls peaks at one listener per message, none once answered.
 */
import { getEventListeners, setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAgentTurn } from '../../runtime/agent/agent-loop.ts';
import { createModelClient } from '../../runtime/agent/providers/create-model.ts';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { ProcessSlots } from '../../runtime/exec/process-slots.ts';
import type { StopNotice } from '../../runtime/tools/call-stop.ts';
import { runCommand } from '../../runtime/exec/run-command.ts';
import { HttpClient } from '../../runtime/net/http-client.ts';
import { serveAgent } from '../../runtime/server/serve.ts';
import { ok, type Tool } from '../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../runtime/tools/registry.ts';
import { tempDir } from '../helpers/project.ts';
import { startScriptedOpenAI } from '../helpers/scripted-llm.ts';

const CALLS = 50;
const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/** A tool that listens to its call's signal, as a process-running tool does. */
const watching: Tool = {
  name: 'watching',
  description: 'Looks at its signal.',
  category: 'custom',
  tags: ['read'],
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  execute: async (args, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return ok({ n: (args as { n?: number }).n ?? 0, aborted: ctx.signal.aborted });
  },
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => res.end('x'.repeat(100)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a long-lived signal shared by many calls', () => {
  it('registry calls, one after another and all at once, leave no listener on it', async () => {
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(watching, 'watching');
    const shared = new AbortController();
    for (let n = 0; n < CALLS; n++) expect(await registry.execute('watching', { n }, { signal: shared.signal })).toMatchObject({ ok: true });
    expect(listeners(shared.signal)).toBe(0);
    // 50 at once hold 50 listeners while they run (one each, as a batch's calls do): no leak, so no warning of one.
    setMaxListeners(CALLS, shared.signal);
    await Promise.all(Array.from({ length: CALLS }, (_, n) => registry.execute('watching', { n }, { signal: shared.signal })));
    expect(listeners(shared.signal)).toBe(0);
  });

  it('HTTP requests and streams (read, closed, or failed) leave no listener on it', async () => {
    const http = new HttpClient();
    const shared = new AbortController();
    for (let n = 0; n < CALLS; n++) {
      await http.request({ url, signal: shared.signal });
      const read = await http.stream({ url, signal: shared.signal });
      for await (const chunk of read.body) void chunk;
      (await http.stream({ url, signal: shared.signal })).close();
      await http.request({ url: 'http://127.0.0.1:1/', signal: shared.signal }).catch(() => {});
    }
    expect(listeners(shared.signal)).toBe(0);
  });

  it('tool processes, and turns waited for, leave no listener on it', async () => {
    const shared = new AbortController();
    const slots = new ProcessSlots(2, 100);
    await Promise.all(
      Array.from({ length: 10 }, () => runCommand({ command: 'true', args: [], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, signal: shared.signal, slots })),
    );
    expect(listeners(shared.signal)).toBe(0);
  });
});

describe('a turn\'s signal', () => {
  it.each([false, true])('keeps no listener of its model requests and 60 tool calls once they end, and an answer of 12 calls is no warning of a leak (streaming: %s)', async (stream) => {
    const answer = { toolCalls: Array.from({ length: 12 }, (_, n) => ({ name: 'watching', arguments: { n } })) };
    const server = await startScriptedOpenAI([answer, answer, answer, answer, answer, { text: 'done' }]);
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(watching, 'watching');
    const model = createModelClient({ provider: 'openai', name: 'gpt-test', base_url: `${server.url}/v1` }, new HttpClient(), {});
    const turn = new AbortController();
    let ran = 0;
    const tools = { list: () => registry.list(), execute: (name: string, args: unknown, options?: Parameters<ToolRegistry['execute']>[2]) => (ran++, registry.execute(name, args, options)) };
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning.message));
    process.on('warning', onWarning);
    try {
      const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model, tools, gate: { decide: () => 'allow' }, stream, signal: turn.signal });
      expect(outcome).toEqual({ status: 'completed', text: 'done' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(ran).toBe(60);
    expect(listeners(turn.signal)).toBe(0);
    expect(warnings).toEqual([]);
  });
});

describe('a batch of MCP calls', () => {
  it('holds at most one listener per message on its request signal, and none once answered', async () => {
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(watching, 'watching');
    const manifest = { agent_id: 'listeners', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry, workDir: registry.workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    const seen = new Set<AbortSignal>();
    let most = 0;
    const acquire = ProcessSlots.prototype.acquire;
    const spy = vi.spyOn(ProcessSlots.prototype, 'acquire').mockImplementation(function (this: ProcessSlots, notice?: StopNotice) {
      // An MCP batch's turns wait on its request signal, a real one.
      const signal = notice as AbortSignal | undefined;
      if (signal && !seen.has(signal)) {
        seen.add(signal);
        // Counts every listener the batch adds to its request signal (turns waited for, calls running).
        const add = signal.addEventListener.bind(signal);
        signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
          add(...args);
          most = Math.max(most, listeners(signal));
        }) as AbortSignal['addEventListener'];
      }
      return acquire.call(this, signal);
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning.message));
    process.on('warning', onWarning);
    try {
      for (let round = 0; round < 3; round++) {
        const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'watching', arguments: { n: i } } }));
        const response = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(batch) });
        expect(((await response.json()) as unknown[]).length).toBe(100);
      }
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      spy.mockRestore();
      process.off('warning', onWarning);
      await agent.stop(100);
    }
    // One signal per POST, each with at most one listener per message (waiting for a turn or running), none left.
    expect(seen.size).toBe(3);
    expect(most).toBeGreaterThan(10);
    expect(most).toBeLessThanOrEqual(100);
    for (const signal of seen) expect(listeners(signal)).toBe(0);
    // So Node's warning of a leak (past 10 on one target) is not one: the batch raises the limit on its own signal to its size.
    expect(warnings).toEqual([]);
  });
});
