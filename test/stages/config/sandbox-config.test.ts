import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../stages/config/load-config.ts';

const load = (yaml: string) => loadConfigText('/project/forge.yaml', `agent_id: a\nversion: 1.0.0\n${yaml}`, '/project');

describe('forge.yaml sandbox:', () => {
  it('defaults to auto, no caps of its own', async () => {
    expect((await load('')).config!.sandbox).toEqual({ mode: 'auto' });
  });

  it('takes the short form', async () => {
    expect((await load('sandbox: required\n')).config!.sandbox).toEqual({ mode: 'required' });
  });

  it('resolves memory, CPU, processes and network as defaults and per tool', async () => {
    const { config, diagnostics } = await load('sandbox:\n  mode: off\n  memory: 512MB\n  cpu: 2m\n  processes: 256\n  network: false\n  tools:\n    fetcher: { network: true, memory: 1GiB }\n    number_cruncher: { cpu: 30, processes: 4096 }\n');
    expect(diagnostics).toEqual([]);
    expect(config!.sandbox).toEqual({
      mode: 'off',
      memory_bytes: 512 * 1024 ** 2,
      cpu_seconds: 120,
      processes: 256,
      network: false,
      tools: { fetcher: { network: true, memory_bytes: 1024 ** 3 }, number_cruncher: { cpu_seconds: 30, processes: 4096 } },
    });
  });

  it('keeps the credential stores tools may read, as written (the running agent expands ~)', async () => {
    const { config, diagnostics } = await load('sandbox:\n  visible: [~/.kube, /etc/app/credentials]\n');
    expect(diagnostics).toEqual([]);
    expect(config!.sandbox).toEqual({ mode: 'auto', visible: ['~/.kube', '/etc/app/credentials'] });
  });

  it.each([
    ['sandbox:\n  visible: ~/.kube\n', 'FORGE_CONFIG_TYPE', 4],
    ['sandbox: sometimes\n', 'FORGE_CONFIG_VALUE', 3],
    ['sandbox:\n  memory: lots\n', 'FORGE_CONFIG_VALUE', 4],
    ['sandbox:\n  memory: 1MB\n', 'FORGE_SANDBOX_MEMORY', 4],
    ['sandbox:\n  cpu: 10ms\n', 'FORGE_SANDBOX_CPU', 4],
    ['sandbox:\n  tools:\n    t: { memory: 2KB }\n', 'FORGE_SANDBOX_MEMORY', 5],
    ['sandbox:\n  processes: 16\n', 'FORGE_CONFIG_VALUE', 4],
    ['sandbox:\n  tools:\n    t: { processes: 64.5 }\n', 'FORGE_CONFIG_TYPE', 5],
    ['sandbox:\n  tools:\n    t: { swap: 1GB }\n', 'FORGE_CONFIG_UNKNOWN_FIELD', 5],
  ])('reports %j at its line', async (yaml, code, line) => {
    const { config, diagnostics } = await load(yaml);
    expect(config).toBeUndefined();
    const problem = diagnostics.find((d) => d.severity === 'error')!;
    expect(problem.code).toBe(code);
    expect(problem.line).toBe(line);
  });

  it('reads approval.clients', async () => {
    expect((await load('approval:\n  clients: policy\n')).config!.approval).toEqual({ auto_approve: ['tag:read'], auto_deny: [], clients: 'policy' });
    const { diagnostics } = await load('approval:\n  clients: everyone\n');
    expect(diagnostics[0]).toMatchObject({ code: 'FORGE_CONFIG_VALUE', line: 4, message: '"approval.clients" must be one of approved, policy (got "everyone")' });
  });
});
