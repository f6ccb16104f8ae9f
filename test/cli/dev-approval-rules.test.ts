/**
 * forge.yaml's approval rules that match no tool (FORGE_APPROVAL_UNMATCHED), checked by forge run as by forge
 * build: at start, and in --dev after a reload that removes the tool a rule named.
 */
import { unlinkSync, writeFileSync } from 'node:fs';
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

  it('--dev refuses every call after a save adds an auto_deny rule one slip from a tool, until a save fixes it', async () => {
    const dir = project('  auto_deny: [name:extra]\n');
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: dir });
    const call = async (tool: string) => (await (await fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as any;
    try {
      expect(await call('shout')).toMatchObject({ ok: true, value: 'done' });
      writeFileSync(join(dir, 'forge.yaml'), minimalConfig('approval:\n  auto_deny: [name:shuot]\n'));
      await agent.waitFor(/every tool call is refused until it is fixed/);
      // Never in force as written, not even for the moment before the reload checks the tools: the rules are put
      // in force as soon as forge.yaml is read, and these would refuse nothing.
      expect(agent.output().split('tool shout {}')[1]).not.toContain('approval changed');
      // Said at its line too, by the reload that follows.
      await agent.waitFor('forge.yaml:5:15 FORGE_APPROVAL_UNMATCHED auto_deny rule "name:shuot" matches no tool: no tool is named "shuot", so "shout" is not refused');
      // The tool the rule was surely meant to refuse does not run, nor does any other.
      for (const tool of ['shout', 'extra']) expect(await call(tool)).toMatchObject({ ok: false, error: { message: expect.stringContaining('"name:shuot" matches no tool') } });
      writeFileSync(join(dir, 'forge.yaml'), minimalConfig('approval:\n  auto_deny: [name:shout]\n'));
      // After the refusal: a save may be read half-written first, and said as a change of its own.
      await agent.waitFor(/until it is fixed[\s\S]*approval changed; in force/);
      expect(await call('shout')).toMatchObject({ ok: false, error: { message: expect.stringContaining('name:shout') } });
      expect(await call('extra')).toMatchObject({ ok: true, value: 'done' });
    } finally {
      await agent.stop();
    }
  });
});
