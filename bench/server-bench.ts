/**
 * The running bundle: time from `node runtime.mjs serve` to the first
 * answered MCP tools/list over HTTP (against `node -e 0` as a baseline),
 * latency of a builtin call over MCP HTTP and over REST, calls per second
 * with 32 concurrent clients, and resident memory after 10,000 calls.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { median, percentile } from './measure.ts';

export interface ServerBenchResult {
  rows: [string, string, string, string][];
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function firstToolsList(runtime: string, cwd: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [runtime, 'serve', '--port', String(port), '--no-auth'], { cwd, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/mcp`;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  try {
    for (;;) {
      try {
        const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) });
        const session = init.headers.get('mcp-session-id')!;
        await init.text();
        const list = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
        if ((await list.text()).includes('"tools"')) return performance.now() - started;
      } catch {
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  } finally {
    child.kill('SIGKILL');
  }
}

function rssMb(pid: number): number {
  const out = execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  return Number(out.trim()) / 1024;
}

export async function benchServer(bundleDir: string, cwd: string): Promise<ServerBenchResult> {
  const runtime = join(bundleDir, 'runtime.mjs');
  const nodeStart = median(Array.from({ length: 7 }, () => {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    return performance.now() - t;
  }));
  const startups = [];
  for (let i = 0; i < 5; i++) startups.push(await firstToolsList(runtime, cwd));
  const startup = median(startups);

  const port = await freePort();
  const child = spawn(process.execPath, [runtime, 'serve', '--port', String(port), '--no-auth'], { cwd, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  try {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    const mcpTimes: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = performance.now();
      await client.callTool({ name: 'uuid_generate', arguments: {} });
      mcpTimes.push(performance.now() - t);
    }
    await client.close();

    const restTimes: number[] = [];
    const rest = () => fetch(`${base}/tools/uuid_generate`, { method: 'POST', body: '{}' }).then((r) => r.arrayBuffer());
    for (let i = 0; i < 2000; i++) {
      const t = performance.now();
      await rest();
      restTimes.push(performance.now() - t);
    }

    // 32 clients, each calling as fast as it can for two seconds.
    let calls = 0;
    const until = performance.now() + 2000;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (performance.now() < until) {
        await rest();
        calls++;
      }
    }));
    const throughput = calls / 2;
    const done = 4000 + calls;
    for (let i = done; i < 10_000; i += 32) await Promise.all(Array.from({ length: Math.min(32, 10_000 - i) }, rest));
    const memory = rssMb(child.pid!);

    const ms = (v: number) => `${v.toFixed(2)} ms`;
    return {
      rows: [
        ['serve → first MCP tools/list', ms(startup), `${(startup / nodeStart).toFixed(2)}× node -e 0 (${ms(nodeStart)})`, ''],
        ['builtin call over MCP HTTP', ms(median(mcpTimes)), `median of 2000, p99 ${ms(percentile(mcpTimes, 99))}`, ''],
        ['builtin call over REST', ms(median(restTimes)), `median of 2000, p99 ${ms(percentile(restTimes, 99))}`, ''],
        ['REST calls/s, 32 clients', `${Math.round(throughput)}/s`, '', ''],
        ['resident memory after 10,000 calls', `${memory.toFixed(0)} MB`, '', ''],
      ],
    };
  } finally {
    child.kill('SIGKILL');
  }
}
