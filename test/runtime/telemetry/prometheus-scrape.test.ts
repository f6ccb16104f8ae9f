/**
 * /metrics as a real Prometheus sees it: Debian's prometheus scrapes the
 * agent on loopback with the bearer token, and a query over its HTTP API
 * returns the tool-call counter; promtool accepts the exposition; without
 * the token it is refused unless forge.yaml says `metrics: public`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { fail, ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { freePort } from '../../helpers/free-port.ts';

const TOKEN = 'prometheus-test-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startAgent(metricsPublic = false) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'echo_words', description: 'Echoes.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async (args) => ok(args) }, 'test');
  registry.register({ name: 'always_fails', description: 'Fails.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => fail('FORGE_TOOL_FAILED', 'broken') }, 'test');
  const manifest = { agent_id: 'metrics-agent', version: '1.0.0', description: 'Metrics.', tools: registry.list(), ...(metricsPublic ? { metrics: 'public' } : {}) } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: TOKEN } });
  running.push(agent);
  return agent;
}

const call = (url: string, tool: string) => fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"word":"hi"}' });


describe('/metrics', () => {
  it('is scraped by a real Prometheus, whose query returns the tool-call counter', async () => {
    const agent = await startAgent();
    for (let i = 0; i < 3; i++) expect((await call(agent.url, 'echo_words')).status).toBe(200);
    expect((await call(agent.url, 'always_fails')).status).toBe(422);

    const dir = tempDir('forge-prometheus-');
    const config = join(dir, 'prometheus.yml');
    writeFileSync(config, [
      'global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: forge', '    authorization:', `      credentials: ${TOKEN}`,
      '    static_configs:', `      - targets: ['127.0.0.1:${agent.port}']`, '',
    ].join('\n'));
    const port = await freePort();
    const prometheus = spawn('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
    children.push(prometheus);

    const query = encodeURIComponent('forge_tool_calls_total{tool="echo_words",frontend="rest",outcome="ok"}');
    let result: { metric: Record<string, string>; value: [number, string] }[] = [];
    const deadline = Date.now() + 60_000;
    while (result.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      try {
        const answer = (await (await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`)).json()) as { data: { result: typeof result } };
        result = answer.data.result;
      } catch {
        // not listening yet
      }
    }
    expect(result).toHaveLength(1);
    expect(result[0].metric.job).toBe('forge');
    expect(result[0].value[1]).toBe('3');
    prometheus.kill('SIGTERM');
  }, 90_000);

  it('passes promtool check metrics, and counts errors and latency per tool', async () => {
    const agent = await startAgent();
    await call(agent.url, 'echo_words');
    await call(agent.url, 'always_fails');
    const text = await (await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stderr + checked.stdout).toBe('');
    expect(checked.status).toBe(0);
    expect(text).toMatch(/^forge_tool_errors_total\{tool="always_fails",frontend="rest"\} [1-9]/m);
    expect(text).toMatch(/^forge_tool_call_duration_seconds_count\{tool="echo_words",frontend="rest"\} [1-9]/m);
    expect(text).toMatch(/^# TYPE forge_model_tokens_total counter$/m);
    expect(text).toMatch(/^forge_turns_in_flight 0$/m);
  });

  it('counts calls to names no tool has under one (unknown) label, over MCP with the SDK client', async () => {
    const agent = await startAgent();
    const scrape = async () => (await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const unknownCalls = (text: string) => Number(/^forge_tool_calls_total\{tool="\(unknown\)",frontend="mcp",outcome="[A-Z_]+"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    const before = unknownCalls(await scrape());
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    for (let i = 0; i < 40; i++) expect((await client.callTool({ name: `made_up_${i}_${'x'.repeat(200)}`, arguments: {} })).isError).toBe(true);
    expect((await client.callTool({ name: 'echo_words', arguments: {} })).isError).toBeFalsy();
    await client.close();
    const text = await scrape();
    expect(text).not.toContain('made_up_');
    expect(unknownCalls(text) - before).toBe(40);
    expect(text).toMatch(/^forge_tool_calls_total\{tool="echo_words",frontend="mcp",outcome="ok"\} [1-9]/m);
  });

  it('needs the bearer token unless metrics is public', async () => {
    const closed = await startAgent();
    expect((await fetch(`${closed.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${closed.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const open = await startAgent(true);
    const response = await fetch(`${open.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    // Public metrics open nothing else.
    expect((await fetch(`${open.url}/tools`)).status).toBe(401);
  });
});
