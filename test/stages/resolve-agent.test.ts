import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleRuntime } from '../../runtime/assemble.ts';
import { loadProject } from '../../stages/load-project.ts';
import { resolveProject } from '../../stages/resolve-agent.ts';
import { StageContext } from '../../stages/stage.ts';
import { minimalConfig, writeProject } from '../helpers/project.ts';

async function assembled(dir: string) {
  const project = await loadProject({ configFile: join(dir, 'forge.yaml') }, new StageContext(dir, false));
  const { resolved, code } = await resolveProject(project);
  return { project, resolved, code };
}

describe('a project run from its sources, resolved into the shape a bundle reads from agent.json', () => {
  it('runs the YAML tool definition the project load checked, without reading the file again', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': 'description: Greets.\ntags: [read]\nparameters:\n  name: { type: string }\nbash: printf "hello %s" {name}\n',
    });
    const { resolved, code } = await assembled(dir);
    // Changed after the load: what runs is still what was loaded (and checked).
    writeFileSync(join(dir, 'tools/greet.yaml'), 'this: [is not a tool\n');
    const runtime = await assembleRuntime(resolved, code);
    if (!runtime.ok) throw new Error('not assembled');
    expect(runtime.diagnostics).toEqual([]);
    expect(await runtime.registry.execute('greet', { name: 'ada' })).toMatchObject({ ok: true, value: 'hello ada' });
    await runtime.close();
  });

  it("carries the egress the build derives for the agent's endpoints (the manifest a bundle would have)", async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig('egress:\n  mode: allowlist\n  allowed_domains: [example.org]\nmodel:\n  provider: openai\n  name: gpt-4o-mini\n  base_url: https://llm.example.com/v1\n'),
    });
    const { resolved } = await assembled(dir);
    expect(resolved.manifest.egress.allowed_domains).toEqual(['example.org', 'llm.example.com']);
    const runtime = await assembleRuntime(resolved, (await assembled(dir)).code);
    if (!runtime.ok) throw new Error('not assembled');
    // The one HTTP client refuses what the egress does not allow, and allows what the build derived.
    await expect(runtime.http.request({ url: 'https://elsewhere.example.net/' })).rejects.toThrow(/egress|not allowed|allowlist/i);
    await runtime.close();
  });

  it('carries the adapter modules only for a project that has MCP servers or APIs (the SDKs load for those alone)', async () => {
    const plain = await assembled(writeProject({ 'forge.yaml': minimalConfig() }));
    expect(plain.code.adapterModules).toEqual({});
    const withServer = await assembled(
      writeProject({ 'forge.yaml': minimalConfig('mcp:\n  servers:\n    - { name: maybe, transport: stdio, command: /nonexistent/mcp-server, required: false }\n') }),
    );
    expect(Object.keys(withServer.code.adapterModules)).toEqual(['mcp']);
    expect(typeof withServer.code.adapterModules.mcp?.McpConnections).toBe('function');
  });

  it('reports an approval rule that does not parse as a usage problem, assembling nothing', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const { resolved, code } = await assembled(dir);
    const runtime = await assembleRuntime(resolved, code, { rules: { autoApprove: ['nonsense:rule'] } });
    expect(runtime.ok).toBe(false);
    expect(runtime).toMatchObject({ usage: true });
    expect(runtime.diagnostics.length).toBeGreaterThan(0);
  });
});
