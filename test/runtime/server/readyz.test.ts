import { writeFileSync } from 'node:fs';
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
});

describe('/readyz', () => {
  it('turns unready when a tool worker keeps dying, naming the tool', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'dies.py'), '"""\nTool: dies\nDescription: Exits every time.\n"""\nimport os\n\ndef execute(args):\n    os._exit(3)\n');
    const { spec } = parseToolFile({ absolute: join(dir, 'dies.py'), relative: 'dies.py', display: 'dies.py', kind: 'python' });
    const registry = new ToolRegistry({ workDir: dir });
    registry.register(createCustomTool(spec!, { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir) }), 'dies.py');
    const manifest = { agent_id: 'ready', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
    const agent = await serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
    running.push(agent);

    expect((await fetch(`${agent.url}/readyz`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const result = await registry.execute('dies', {});
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CRASHED' } });
    }
    const ready = await fetch(`${agent.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, unhealthy: [{ name: 'dies', detail: 'its worker keeps failing (exited with 3)' }] });
    // Liveness is another question: the process itself is fine.
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });
});
