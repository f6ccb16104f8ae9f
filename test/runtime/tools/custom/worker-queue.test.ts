/**
 * A tool's worker runs one call at a time, and only so many calls may wait
 * for it (FORGE_TOOL_QUEUE, here 3): a flood of calls to a slow tool once
 * queued them all, in memory and without end, and every other caller of the
 * tool waited behind them. The tool here answers only once the file "open"
 * exists, so what is refused, what waits and what is answered does not
 * depend on how fast the machine is.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../../runtime/manifest.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../../runtime/server/serve.ts';
import { createCustomTool } from '../../../../runtime/tools/custom/custom-tool.ts';
import type { ToolResult } from '../../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { parseToolFile } from '../../../../stages/parse-docstrings.ts';
import { createSourceNodeLauncher } from '../../../../stages/source-node-launcher.ts';
import { tempDir } from '../../../helpers/project.ts';

const registries: ToolRegistry[] = [];
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
  delete process.env.FORGE_TOOL_QUEUE;
});
afterAll(async () => {
  await Promise.all(registries.map((r) => r.close()));
});

const SOURCES = {
  python:
    '"""\nTool: hold\nDescription: Answers its number once the file "open" exists.\n\nInput:\n  n (int): What to answer.\n"""\nimport os, sys, time\n\ndef execute(args):\n    print(f"started {args[\'n\']}", file=sys.stderr, flush=True)\n    while not os.path.exists("open"):\n        time.sleep(0.02)\n    return args["n"]\n',
  typescript:
    '/**\n * Tool: hold\n * Description: Answers its number once the file "open" exists.\n *\n * Input:\n *   n (int): What to answer.\n */\nimport { existsSync } from "node:fs";\n\nexport async function execute(args: { n: number }) {\n  console.error(`started ${args.n}`);\n  while (!existsSync("open")) await new Promise((r) => setTimeout(r, 20));\n  return args.n;\n}\n',
};

/** The tool "hold" with room for 3 waiting calls, and what it has printed so far. */
function holdTool(kind: 'python' | 'typescript') {
  process.env.FORGE_TOOL_QUEUE = '3';
  const dir = tempDir();
  const file = kind === 'python' ? 'hold.py' : 'hold.ts';
  writeFileSync(join(dir, file), SOURCES[kind]);
  const { spec } = parseToolFile({ absolute: join(dir, file), relative: file, display: file, kind });
  let printed = '';
  const tool = createCustomTool(spec!, { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir), onStderr: (_, text) => (printed += text) });
  const registry = new ToolRegistry({ workDir: dir, log: silentLogger });
  registry.register(tool, file);
  registries.push(registry);
  return { registry, dir, started: (n: number) => printed.includes(`started ${n}\n`), open: () => writeFileSync(join(dir, 'open'), '') };
}

/** Calls whose answers are collected as they come. */
function collect(calls: Promise<ToolResult>[]): ToolResult[] {
  const answered: ToolResult[] = [];
  for (const call of calls) void call.then((result) => answered.push(result));
  return answered;
}

const busy = expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'FORGE_TOOL_BUSY', message: 'tool "hold" is busy: 3 calls are already waiting for it' }) });

describe.each(['python', 'typescript'] as const)('a %s worker', (kind) => {
  it('refuses calls past its queue at once with FORGE_TOOL_BUSY (503 over REST); the waiting calls are answered, and the tool serves after', async () => {
    const { registry, dir, started, open } = holdTool(kind);
    const agent = await serveAgent({ manifest: { agent_id: 'queue', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    running.push(agent);

    const first = registry.execute('hold', { n: 0 });
    await waitFor(async () => started(0));
    const flood = Array.from({ length: 9 }, (_, i) => registry.execute('hold', { n: i + 1 }));
    // Nothing can answer while "open" is missing but a refusal: 3 calls wait, 6 are refused.
    const answered = collect(flood);
    await waitFor(async () => answered.length >= 6);
    expect(answered).toEqual(Array(6).fill(busy));

    const rest = await fetch(`${agent.url}/tools/hold`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":100}' });
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('1');
    expect(await rest.json()).toMatchObject(busy);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);

    open();
    expect(await first).toMatchObject({ ok: true, value: 0 });
    const results = await Promise.all(flood);
    expect(results.filter((r) => !r.ok)).toHaveLength(6);
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(await registry.execute('hold', { n: 99 })).toMatchObject({ ok: true, value: 99 });
  }, 60_000);

  it('frees the place of a waiting call that times out or is cancelled, at once', async () => {
    const { registry, started, open } = holdTool(kind);
    const first = registry.execute('hold', { n: 0 });
    await waitFor(async () => started(0));
    const cancel = new AbortController();
    const cancelled = registry.execute('hold', { n: 1 }, { signal: cancel.signal });
    const timedOut = [2, 3].map((n) => registry.execute('hold', { n }, { timeoutMs: 200 }));
    expect(await Promise.all(timedOut)).toEqual(Array(2).fill(expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'FORGE_TOOL_TIMEOUT' }) })));
    cancel.abort();
    expect(await cancelled).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED' } });

    // The queue is empty again though the first call still runs: three more wait, a fourth is refused.
    const next = [4, 5, 6, 7].map((n) => registry.execute('hold', { n }));
    const answered = collect(next);
    await waitFor(async () => answered.length >= 1);
    expect(answered).toEqual([busy]);

    open();
    expect(await first).toMatchObject({ ok: true, value: 0 });
    const results = await Promise.all(next);
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.ok)).toEqual([busy]);
  }, 60_000);
});

async function waitFor(condition: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
