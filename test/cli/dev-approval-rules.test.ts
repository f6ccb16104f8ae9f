/**
 * forge.yaml's approval rules that match no tool (FORGE_APPROVAL_UNMATCHED), checked by forge run as by forge
 * build: at start, and in --dev after a reload that removes the tool a rule named.
 */
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { forge, forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';

const tool = (description: string) => `description: ${description}\ntags: [write]\nbash: echo done\n`;
const project = (approval: string) => writeProject({ 'forge.yaml': minimalConfig(`approval:\n${approval}`), 'tools/shout.yaml': tool('Shouts.'), 'tools/extra.yaml': tool('Extra.') });

describe('forge run and approval rules that match no tool', () => {
  it('refuses to start with an auto_deny rule one slip from a tool the agent has, which would run unrefused', async () => {
    const { code, stderr } = await forge(['run', '--dev', '--port', '0', '--no-auth'], project('  auto_deny: [name:shuot]\n'));
    expect(code).toBe(1);
    expect(stderr).toContain('forge.yaml:5:15 FORGE_APPROVAL_UNMATCHED auto_deny rule "name:shuot" matches no tool: no tool is named "shuot", so "shout" is not refused');
  });

  it('--dev warns at start, and after a reload that removes a tool a rule named, once', async () => {
    const dir = project('  auto_approve: [name:extra, name:shuot]\n');
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: dir });
    try {
      expect(agent.output()).toContain('forge.yaml:5:30 FORGE_APPROVAL_UNMATCHED auto_approve rule "name:shuot" matches no tool: no tool is named "shuot"');
      expect(agent.output()).not.toContain('rule "name:extra"');
      unlinkSync(join(dir, 'tools', 'extra.yaml'));
      await agent.waitFor(/removed extra\n/);
      expect(agent.output()).toContain('forge.yaml:5:18 FORGE_APPROVAL_UNMATCHED auto_approve rule "name:extra" matches no tool: no tool is named "extra"');
      // The rule that matched nothing at start is not said again at the reload.
      expect(agent.output().split('rule "name:shuot" matches no tool').length).toBe(2);
    } finally {
      await agent.stop();
    }
  });
});
