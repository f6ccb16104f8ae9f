/**
 * `npm run bench:replicas`: what the shared state store costs and what
 * replicas buy, measured in one run on this machine with a real PostgreSQL
 * (Debian's, started on loopback) and a model server that answers at once:
 *
 *   A2A message/send, one request at a time: file: vs postgres:, one replica
 *     (the difference is the store's overhead per call: turn hold, CAS save,
 *     task rows, lease)
 *   A2A message/send with 32 concurrent clients (each its own conversation):
 *     file: x1, postgres: x1, postgres: x3 (clients spread round-robin)
 *   REST tool calls (no state) with 32 concurrent clients: x1 vs x3
 *   the store's own work for one A2A call, in process (no HTTP, no model):
 *     read the pending approval, one turn (hold + CAS save), four task saves,
 *     a lease held and released — file: vs postgres:
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileStore } from '../runtime/state/file-store.ts';
import { openPostgresStore } from '../runtime/state/postgres-store.ts';
import type { StateStore } from '../runtime/state/store.ts';
import { Task } from '../runtime/vendor/a2a.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { median, withoutMachineStartCosts } from './measure.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
withoutMachineStartCosts();
const TOKEN = 'bench-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/** An OpenAI-compatible model that answers every request at once, streaming one chunk. */
function startModel(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok' } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server })));
}

function startReplica(bundle: string, stateUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const cwd = mkdtempSync(join(tmpdir(), 'forge-bench-replica-'));
  const child = spawn(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], {
    cwd,
    env: { ...process.env, FORGE_AUTH_TOKEN: TOKEN, FORGE_STATE_URL: stateUrl, FORGE_PUBLIC_URL: 'http://bench.example' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stderr!.on('data', (d: Buffer) => {
      output += d;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ url: match[1], child });
    });
    child.on('exit', (code) => reject(new Error(`replica exited with ${code}: ${output}`)));
  });
}

let messageId = 0;
async function send(url: string, contextId: string): Promise<void> {
  const body = { jsonrpc: '2.0', id: ++messageId, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: `b${messageId}`, contextId, parts: [{ kind: 'text', text: 'hi' }] } } };
  const response = await fetch(`${url}/a2a`, { method: 'POST', headers, body: JSON.stringify(body) });
  const result = (await response.json()) as { result?: { status: { state: string } }; error?: unknown };
  if (result.result?.status.state !== 'completed') throw new Error(`message/send failed: ${JSON.stringify(result)}`);
}

async function callTool(url: string): Promise<void> {
  const response = await fetch(`${url}/tools/uuid_generate`, { method: 'POST', headers, body: '{}' });
  if (response.status !== 200) throw new Error(`tool call failed: ${response.status}`);
  await response.arrayBuffer();
}

/** Requests per second: `clients` loops sharing `total` requests, spread over the replicas round-robin. */
async function throughput(urls: string[], total: number, clients: number, request: (url: string, client: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (next < total) {
        const n = next++;
        await request(urls[n % urls.length], client);
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

async function sequentialLatency(url: string, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await send(url, `latency-${i % 10}`);
    times.push(performance.now() - started);
  }
  return median(times);
}

/** The store's part of one A2A message/send, as the runtime does it; median ms over `runs`. */
async function storeWorkPerCall(store: StateStore, runs: number): Promise<number> {
  const times: number[] = [];
  const context = {} as never;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const id = `bench-${i}`;
    const task = Task.fromJSON({ id, contextId: `ctx-${i % 10}`, status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } });
    await store.tasks.save(task, context);
    const lease = await store.tasks.hold(id);
    await store.conversations.read(`ctx-${i % 10}`);
    await store.conversations.withTurn(`ctx-${i % 10}`, async (session) => {
      session.messages.push({ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok' });
      if (session.messages.length > 40) session.messages.splice(0, 20);
    });
    for (let s = 0; s < 3; s++) await store.tasks.save(task, context);
    await store.tasks.load(id, context);
    await lease.release();
    times.push(performance.now() - started);
  }
  return median(times);
}

const dir = mkdtempSync(join(tmpdir(), 'forge-bench-replicas-'));
const postgres = await startPostgres();
const model = await startModel();
const replicas: ChildProcess[] = [];
try {
  writeFileSync(join(dir, 'forge.yaml'), `agent_id: bench-agent\nversion: 1.0.0\ndescription: Bench.\nmodel:\n  provider: openai\n  name: bench\n  base_url: ${model.url}/v1\ntools:\n  - uuid_generate\n`);
  mkdirSync(join(dir, 'tools'));
  const build = spawn(process.execPath, [join(root, 'bin', 'forge.cjs'), 'build', '--prod'], { cwd: dir, stdio: 'inherit' });
  await new Promise((resolve) => build.on('exit', resolve));
  const bundle = join(dir, 'bundle');
  cpSync(join(dir, '.forge-output'), bundle, { recursive: true });

  const start = async (count: number, stateUrl: string) => {
    const started = await Promise.all(Array.from({ length: count }, () => startReplica(bundle, stateUrl)));
    replicas.push(...started.map((r) => r.child));
    return started.map((r) => r.url);
  };
  const stopAll = () => replicas.splice(0).forEach((c) => c.kill('SIGKILL'));
  const warm = async (urls: string[]) => {
    for (const url of urls) for (let i = 0; i < 20; i++) await send(url, `warm-${i}`);
  };
  const TOTAL = Number(process.env.BENCH_MESSAGES ?? 2000);

  const fileStore = createFileStore(mkdtempSync(join(tmpdir(), 'forge-bench-store-')));
  const pgStore = await openPostgresStore({ url: await postgres.createDatabase('bench_store'), leaseMs: 15_000 });
  await storeWorkPerCall(fileStore, 50);
  await storeWorkPerCall(pgStore, 50);
  const fileStoreMs = await storeWorkPerCall(fileStore, 500);
  const pgStoreMs = await storeWorkPerCall(pgStore, 500);
  await pgStore.close();

  const file = await start(1, 'file:');
  await warm(file);
  const fileLatency = await sequentialLatency(file[0], 200);
  const fileThroughput = await throughput(file, TOTAL, 32, (url, c) => send(url, `file-${c}`));
  const fileRest = await throughput(file, TOTAL * 2, 32, (url) => callTool(url));
  stopAll();

  const one = await start(1, await postgres.createDatabase('bench_one'));
  await warm(one);
  const pgLatency = await sequentialLatency(one[0], 200);
  const pgThroughput = await throughput(one, TOTAL, 32, (url, c) => send(url, `pg1-${c}`));
  stopAll();

  const three = await start(3, await postgres.createDatabase('bench_three'));
  await warm(three);
  const pg3Throughput = await throughput(three, TOTAL, 32, (url, c) => send(url, `pg3-${c}`));
  const pg3Rest = await throughput(three, TOTAL * 2, 32, (url) => callTool(url));
  stopAll();

  const rows: [string, string, string][] = [
    ['store work per A2A call, file:', `${fileStoreMs.toFixed(2)} ms`, 'median of 500, in process'],
    ['store work per A2A call, postgres:', `${pgStoreMs.toFixed(2)} ms`, `${(pgStoreMs / fileStoreMs).toFixed(2)}× file:`],
    ['message/send latency, file: x1', `${fileLatency.toFixed(2)} ms`, 'median of 200, one at a time'],
    ['message/send latency, postgres: x1', `${pgLatency.toFixed(2)} ms`, `store overhead ${(pgLatency - fileLatency).toFixed(2)} ms per call (${(pgLatency / fileLatency).toFixed(2)}× file:)`],
    ['message/send, 32 clients, file: x1', `${fileThroughput.toFixed(0)}/s`, ''],
    ['message/send, 32 clients, postgres: x1', `${pgThroughput.toFixed(0)}/s`, `${(pgThroughput / fileThroughput).toFixed(2)}× file: x1`],
    ['message/send, 32 clients, postgres: x3', `${pg3Throughput.toFixed(0)}/s`, `${(pg3Throughput / pgThroughput).toFixed(2)}× postgres: x1`],
    ['REST tool call, 32 clients, x1', `${fileRest.toFixed(0)}/s`, ''],
    ['REST tool call, 32 clients, x3', `${pg3Rest.toFixed(0)}/s`, `${(pg3Rest / fileRest).toFixed(2)}× x1`],
  ];
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c].length)));
  console.log(`\n${'measure'.padEnd(widths[0])}  ${'result'.padStart(widths[1])}  against`);
  for (const r of rows) console.log(`${r[0].padEnd(widths[0])}  ${r[1].padStart(widths[1])}  ${r[2]}`);
} finally {
  replicas.forEach((c) => c.kill('SIGKILL'));
  model.server.close();
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}
