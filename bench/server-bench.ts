/**
 * The running bundle against baselines measured in the same run:
 *
 *   start → first answered request      ÷ a bare node:http server's start → answer (same client, same polling)
 *   warm Python call over REST          − a round trip to the bare server with the same client
 *   MCP over HTTP, 32 clients (calls/s) ÷ REST, 32 clients, the same builtin
 *
 * plus call latency over MCP (the SDK client) and REST, and resident memory
 * after 10,000 calls.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBareServer } from './bare-server.ts';
import { median, percentile, type BenchRow } from './measure.ts';
import { freePort } from '../test/helpers/free-port.ts';


/** Wall time from spawning `start(port)` to the first 200 answer to GET `path` (polled every 2 ms). */
async function startToAnswer(start: (port: number) => ChildProcess, path: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = start(port);
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        await res.arrayBuffer();
        if (res.ok) return performance.now() - started;
      } catch {
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  } finally {
    child.kill('SIGKILL');
  }
}

async function waitReady(base: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

function rssMb(pid: number): number {
  const out = execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  return Number(out.trim()) / 1024;
}

/** Sequential round trips, `blocks` × `perBlock`, alternating between the calls given so drift hits all alike. */
async function interleaved(calls: (() => Promise<unknown>)[], blocks: number, perBlock: number): Promise<number[][]> {
  const times = calls.map(() => [] as number[]);
  for (let b = 0; b < blocks; b++) {
    for (const [i, call] of calls.entries()) {
      for (let k = 0; k < perBlock; k++) {
        const t = performance.now();
        await call();
        times[i].push(performance.now() - t);
      }
    }
  }
  return times;
}

/** Calls per second with `clients` concurrent callers for `ms`. */
async function throughput(clients: number, call: (client: number) => Promise<unknown>, ms = 2000): Promise<number> {
  let calls = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < until) {
        await call(c);
        calls++;
      }
    }),
  );
  return calls / (ms / 1000);
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/**
 * A lean MCP client on the wire (fetch, JSON-RPC), so that 32 of them cost
 * this process what 32 REST callers do: the figure is the server's. It
 * initializes as every client does and keeps the session id if given one.
 */
async function wireMcpClient(url: string): Promise<(id: number) => Promise<void>> {
  const init = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  const headers = session ? { ...MCP_HEADERS, 'mcp-session-id': session } : MCP_HEADERS;
  const initialized = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  await initialized.arrayBuffer();
  return async (id) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'uuid_generate', arguments: {} } }) });
    const text = await res.text();
    if (!text.includes('"result"')) throw new Error(`MCP call failed: ${text.slice(0, 200)}`);
  };
}

export async function benchServer(bundleDir: string, cwd: string): Promise<BenchRow[]> {
  const runtime = join(bundleDir, 'runtime.mjs');
  const serveWith = (env: NodeJS.ProcessEnv) => (port: number) => spawn(process.execPath, [runtime, 'serve', '--port', String(port), '--no-auth'], { cwd, stdio: 'ignore', env: { ...process.env, ...env } });
  const serve = serveWith({});

  // Start → first answer, alternating the three so load changes hit all. The first start writes the
  // runtime core's code cache (as a deployment's first start does) and the rest use it; the third
  // column starts without it.
  const bareStarts: number[] = [];
  const bundleStarts: number[] = [];
  const uncachedStarts: number[] = [];
  for (let i = 0; i < 7; i++) {
    bareStarts.push(await startToAnswer(startBareServer, '/'));
    bundleStarts.push(await startToAnswer(serve, '/tools'));
    uncachedStarts.push(await startToAnswer(serveWith({ FORGE_CODE_CACHE: 'off' }), '/tools'));
  }
  const bareStart = median(bareStarts);
  const bundleStart = median(bundleStarts);
  const uncachedStart = median(uncachedStarts);

  const barePort = await freePort();
  const bare = startBareServer(barePort);
  const port = await freePort();
  const child = serve(port);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base);
    await waitReady(`http://127.0.0.1:${barePort}`).catch(() => {});
    const post = (url: string, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.arrayBuffer());
    const bareCall = () => post(`http://127.0.0.1:${barePort}/`, '{"n":1}');
    const pythonCall = () => post(`${base}/tools/py_tool_0`, '{"n":1}');
    const rest = () => post(`${base}/tools/uuid_generate`, '{}');
    await pythonCall(); // starts the worker
    for (let i = 0; i < 200; i++) await Promise.all([bareCall(), pythonCall(), rest()]);
    const [bareTimes, pythonTimes, restTimes] = await interleaved([bareCall, pythonCall, rest], 10, 200);
    const pythonOverhead = median(pythonTimes) - median(bareTimes);

    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    const [mcpTimes] = await interleaved([() => client.callTool({ name: 'uuid_generate', arguments: {} })], 4, 250);
    await client.close();

    const mcpClients = await Promise.all(Array.from({ length: 32 }, () => wireMcpClient(`${base}/mcp`)));
    let id = 1;
    // Warm both paths, then measure each twice, alternating.
    await throughput(32, rest, 300);
    await throughput(32, (c) => mcpClients[c](id++), 300);
    const restRates = [await throughput(32, rest), 0];
    const mcpRates = [await throughput(32, (c) => mcpClients[c](id++)), 0];
    restRates[1] = await throughput(32, rest);
    mcpRates[1] = await throughput(32, (c) => mcpClients[c](id++));
    const restRate = (restRates[0] + restRates[1]) / 2;
    const mcpRate = (mcpRates[0] + mcpRates[1]) / 2;

    for (let i = 0; i < 10_000; i += 32) await Promise.all(Array.from({ length: 32 }, rest));
    const memory = rssMb(child.pid!);

    const ms = (v: number, digits = 2) => `${v.toFixed(digits)} ms`;
    return [
      { measure: 'bundle start → first answered request', result: ms(bundleStart, 0), ratio: bundleStart / bareStart, against: `bare node http server ${ms(bareStart, 0)}`, goal: 1.3 },
      { measure: 'the same without the code cache', result: ms(uncachedStart, 0), ratio: uncachedStart / bareStart, against: 'FORGE_CODE_CACHE=off (a bundle whose cache no start could write)' },
      { measure: 'warm Python call over REST − bare round trip', result: ms(pythonOverhead, 3), against: `${ms(median(pythonTimes), 3)} − ${ms(median(bareTimes), 3)}; p99 ${ms(percentile(pythonTimes, 99))}`, goal: 0.3, absolute: pythonOverhead },
      { measure: 'MCP over HTTP ÷ REST, 32 clients', result: `${Math.round(mcpRate)}/s`, ratio: mcpRate / restRate, against: `REST ${Math.round(restRate)}/s`, goal: 0.6, higherIsBetter: true },
      { measure: 'builtin call over MCP HTTP (SDK client)', result: ms(median(mcpTimes)), against: `p99 ${ms(percentile(mcpTimes, 99))}` },
      { measure: 'builtin call over REST', result: ms(median(restTimes)), against: `p99 ${ms(percentile(restTimes, 99))}` },
      { measure: 'resident memory after 10,000 calls', result: `${memory.toFixed(0)} MB` },
    ];
  } finally {
    child.kill('SIGKILL');
    bare.kill('SIGKILL');
  }
}
