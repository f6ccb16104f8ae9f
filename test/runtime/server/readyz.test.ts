import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { createCustomTool } from '../../../runtime/tools/custom/custom-tool.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { parseToolFile } from '../../../stages/parse-docstrings.ts';
import { createSourceNodeLauncher } from '../../../stages/source-node-launcher.ts';
import { tempDir } from '../../helpers/project.ts';

const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
  delete process.env.FORGE_TOOL_COOLDOWN;
});

function pythonTool(dir: string, file: string, source: string) {
  writeFileSync(join(dir, file), source);
  const { spec } = parseToolFile({ absolute: join(dir, file), relative: file, display: file, kind: 'python' });
  return createCustomTool(spec!, { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir) });
}

describe('/readyz', () => {
  it('stays ready when a tool worker keeps dying: the tool is reported, its circuit opens, the other tools serve', async () => {
    process.env.FORGE_TOOL_COOLDOWN = '400ms';
    const dir = tempDir();
    writeFileSync(join(dir, 'broken'), '');
    const registry = new ToolRegistry({ workDir: dir });
    registry.register(pythonTool(dir, 'dies.py', '"""\nTool: dies\nDescription: Exits while the file "broken" exists.\n"""\nimport os\n\ndef execute(args):\n    if os.path.exists("broken"):\n        os._exit(3)\n    return "fine"\n'), 'dies.py');
    registry.register(pythonTool(dir, 'fine.py', '"""\nTool: fine\nDescription: Works.\n"""\n\ndef execute(args):\n    return "fine"\n'), 'fine.py');
    const manifest = { agent_id: 'ready', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    running.push(agent);

    expect((await fetch(`${agent.url}/readyz`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const result = await registry.execute('dies', {});
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CRASHED' } });
    }
    const ready = await fetch(`${agent.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, unhealthy: [{ name: 'dies', circuit: 'open', detail: 'its worker keeps failing (exited with 3); circuit open' }] });
    // Open: refused at once with a clear error, without starting the worker again.
    const refused = await registry.execute('dies', {});
    expect(refused).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CIRCUIT_OPEN', message: 'tool "dies" is not taking calls: its worker failed 3 times in a row (exited with 3)' } });
    expect(await registry.execute('fine', {})).toMatchObject({ ok: true, value: 'fine' });
    // REST says so too, and the pod is still ready.
    const rest = await fetch(`${agent.url}/tools/dies`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(rest.status).toBe(503);
    // When to send it again: the circuit's cool-down left, in whole seconds (400 ms: 1).
    expect(rest.headers.get('retry-after')).toBe('1');
    expect(await rest.json()).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CIRCUIT_OPEN', retryAfterSeconds: 1 } });
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);

    // After the cool-down one trial call goes through: it fails, the circuit opens again.
    await waitFor(async () => ((await (await fetch(`${agent.url}/readyz`)).json()) as { unhealthy?: { circuit: string }[] }).unhealthy?.[0]?.circuit === "half-open");
    expect(await registry.execute('dies', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CRASHED' } });
    expect(await registry.execute('dies', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CIRCUIT_OPEN' } });

    // Fixed: the next trial succeeds and closes the circuit.
    rmSync(join(dir, 'broken'));
    expect(existsSync(join(dir, 'broken'))).toBe(false);
    await waitFor(async () => ((await (await fetch(`${agent.url}/readyz`)).json()) as { unhealthy?: { circuit: string }[] }).unhealthy?.[0]?.circuit === "half-open");
    expect(await registry.execute('dies', {})).toMatchObject({ ok: true, value: 'fine' });
    expect(await (await fetch(`${agent.url}/readyz`)).json()).not.toHaveProperty('unhealthy');
  });

  it("tells a REST client when an open circuit takes calls again: Retry-After is the cool-down's seconds left", async () => {
    process.env.FORGE_TOOL_COOLDOWN = '30s';
    const dir = tempDir();
    const registry = new ToolRegistry({ workDir: dir });
    registry.register(pythonTool(dir, 'dies.py', '"""\nTool: dies\nDescription: Always exits.\n"""\nimport os\n\ndef execute(args):\n    os._exit(3)\n'), 'dies.py');
    const manifest = { agent_id: 'ready', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    running.push(agent);
    for (let i = 0; i < 3; i++) expect(await registry.execute('dies', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CRASHED' } });
    const rest = await fetch(`${agent.url}/tools/dies`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(rest.status).toBe(503);
    // 30 s from the third failure, asked a moment later: about 30 (less on a slow machine), never a fixed 1.
    const seconds = Number(rest.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(20);
    expect(seconds).toBeLessThanOrEqual(30);
    expect(((await rest.json()) as { error: { retryAfterSeconds: number } }).error.retryAfterSeconds).toBe(Number(rest.headers.get('retry-after')));
  });
});

async function waitFor(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
