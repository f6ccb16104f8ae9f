/** forge.yaml's `emergent:` switch: it alone enables forge_tool, with its settings as the tool's config. */
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../stages/config/load-config.ts';

const load = (extra: string) => loadConfigText('/project/forge.yaml', `agent_id: a\nversion: 1.0.0\n${extra}`, '/project');

describe('emergent:', () => {
  it('is off by default: no forge_tool', async () => {
    const { config } = await load('tools: [json_parse]\n');
    expect(config!.emergent).toBeUndefined();
    expect(config!.tools.map((t) => t.name)).toEqual(['json_parse']);
  });

  it('true enables forge_tool with default settings', async () => {
    const { config } = await load('emergent: true\n');
    expect(config!.emergent).toEqual({});
    expect(config!.tools).toEqual([expect.objectContaining({ name: 'forge_tool', at: expect.objectContaining({ line: 3 }) })]);
  });

  it('settings become forge_tool\'s config', async () => {
    const { config } = await load('emergent: { max_tools: 3, timeout: 2, judge: model }\n');
    expect(config!.tools.find((t) => t.name === 'forge_tool')!.config).toEqual({ max_tools: 3, timeout: 2, judge: 'model' });
  });

  it('refuses a misspelt setting where it is written', async () => {
    const { config, diagnostics } = await load('emergent:\n  max_tool: 3\n');
    expect(config).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'FORGE_CONFIG_UNKNOWN_FIELD', line: 4, hint: 'did you mean "max_tools"?' })]);
  });

  it('refuses forge_tool listed under tools:, pointing at the line, with the switch as the hint', async () => {
    const { config, diagnostics } = await load('tools:\n  - forge_tool\n');
    expect(config).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'FORGE_EMERGENT_SWITCH', line: 4, hint: expect.stringContaining('emergent: true') })]);
  });
});
