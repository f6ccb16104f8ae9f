/**
 * agent.json's own approval rules, checked as the bundle starts the way the
 * build checks forge.yaml's: a built bundle whose agent.json was edited
 * (FORGE_VERIFY=off lets it start) refuses a section it cannot read and an
 * auto_deny rule one slip from a tool it has, before a tool runs, and warns
 * of a rule that matches no tool.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { forge, runProcess, writeProject } from '../helpers/project.ts';

let project: string;
let agentJson: string;
let built: string;

beforeAll(async () => {
  project = writeProject({
    'forge.yaml': 'agent_id: rules\nversion: 1.0.0\ndescription: x\ntools:\n  - file_read\n  - file_write\napproval:\n  auto_approve: [tag:read]\n  auto_deny: [name:file_write]\n',
  });
  const result = await forge(['build', '--prod'], project);
  expect(result.code, result.stderr).toBe(0);
  agentJson = join(project, '.forge-output', 'agent.json');
  built = readFileSync(agentJson, 'utf8');
}, 120_000);

/** agent.json as the build wrote it, with `approval` put in its place, written as the build writes it. */
function editApproval(approval: unknown): string {
  const manifest = JSON.parse(built);
  manifest.approval = approval;
  const text = JSON.stringify(manifest, null, 2) + '\n';
  writeFileSync(agentJson, text);
  return text;
}

/** The line:column of `needle` in agent.json's `text`, from its approval section on, as a diagnostic places it. */
function place(text: string, needle: string): string {
  const before = text.slice(0, text.indexOf(needle, text.indexOf('"approval"')));
  return `${before.split('\n').length}:${before.length - before.lastIndexOf('\n')}`;
}

const writeCall = () => {
  rmSync(join(project, 'written.txt'), { force: true });
  return runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'call', 'file_write', '{"path":"written.txt","content":"x"}', '--yes'], { cwd: project, env: { FORGE_VERIFY: 'off' } });
};

describe("the bundle's start checks agent.json's approval rules", () => {
  it('says nothing of rules that match its tools, and refuses what auto_deny names', async () => {
    writeFileSync(agentJson, built);
    const { code, stderr } = await writeCall();
    expect(code).toBe(1);
    expect(stderr).not.toContain('FORGE_APPROVAL_UNMATCHED');
    expect(stderr).toContain('refused by the approval rule "name:file_write"');
    expect(existsSync(join(project, 'written.txt'))).toBe(false);
  });

  it('refuses to start with an auto_deny rule one slip from a tool it has, which would run unrefused', async () => {
    const text = editApproval({ auto_approve: ['tag:read'], auto_deny: ['name:file_wrte'] });
    const { code, stderr } = await writeCall();
    // agent.json's mistake, not the command line's: a failure (1), not a usage error.
    expect(code, stderr).toBe(1);
    expect(stderr).toContain(`agent.json:${place(text, '"name:file_wrte"')} FORGE_APPROVAL_UNMATCHED agent.json's auto_deny rule "name:file_wrte" matches no tool: no tool is named "file_wrte", so "file_write" is not refused`);
    expect(stderr).toContain('did you mean "name:file_write"?');
    expect(existsSync(join(project, 'written.txt'))).toBe(false);
    const listed = await runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'tools'], { cwd: project, env: { FORGE_VERIFY: 'off' } });
    expect(listed.code, listed.stderr).toBe(1);
    expect(listed.stderr).toContain('FORGE_APPROVAL_UNMATCHED agent.json\'s auto_deny rule "name:file_wrte"');
  });

  it.each([
    ['an unknown key', { auto_approve: ['tag:read'], auto_deny: [], auto_denny: ['name:file_write'] }, '"auto_denny"', `agent.json's approval has an unknown key "auto_denny"`, 'approval has auto_approve, auto_deny, clients'],
    ['a rule that does not parse', { auto_approve: ['tag:read'], auto_deny: ['file_write'] }, '"file_write"', `agent.json's approval.auto_deny: "file_write" is not an approval rule`, 'rules look like tag:read'],
    ['a list that is not a list', { auto_approve: ['tag:read'], auto_deny: 'name:file_write' }, '"auto_deny"', `agent.json's approval.auto_deny is not a list of rules`, 'a rule looks like tag:read'],
    ['a rule that is not text', { auto_approve: ['tag:read'], auto_deny: [7] }, '"auto_deny"', `agent.json's approval.auto_deny is not a list of rules`, 'a rule looks like tag:read'],
    ['a list left out', { auto_approve: ['tag:read'] }, '"approval"', `agent.json's approval has no auto_deny list`, 'a rule looks like tag:read'],
    ['no approval section', null, '"approval"', `agent.json's "approval" is not an object with auto_approve and auto_deny`, 'run forge build'],
  ])('refuses to start with %s, with a code and a hint', async (_, approval, needle, message, hint) => {
    const text = editApproval(approval);
    const { code, stderr } = await writeCall();
    expect(code, stderr).toBe(1);
    expect(stderr).toContain(`agent.json:${place(text, needle)} FORGE_APPROVAL_RULE ${message}`);
    expect(stderr).toContain(`(${hint}`);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(project, 'written.txt'))).toBe(false);
  });

  it('warns of a rule that matches no tool as serve starts, and serves', async () => {
    const text = editApproval({ auto_approve: ['tag:read', 'tag:wirte', 'name:file_raed'], auto_deny: ['name:file_write'] });
    const agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: 't', FORGE_VERIFY: 'off' }, ready: /on (http:\/\/\S+)/ });
    try {
      expect(agent.output()).toContain(`agent.json:${place(text, '"tag:wirte"')} FORGE_APPROVAL_UNMATCHED agent.json's auto_approve rule "tag:wirte" matches no tool: no tool is tagged "wirte"`);
      expect(agent.output()).toContain(`agent.json:${place(text, '"name:file_raed"')} FORGE_APPROVAL_UNMATCHED agent.json's auto_approve rule "name:file_raed" matches no tool: no tool is named "file_raed"`);
      const res = await fetch(`${agent.url}/tools/file_read`, { method: 'POST', headers: { authorization: 'Bearer t' }, body: '{"path":"forge.yaml"}' });
      expect(await res.json()).toMatchObject({ ok: true });
    } finally {
      await agent.stop('SIGKILL');
    }
  });

  it("says nothing of a name: rule near none of its tools: it may name one a --prod build left out, or a shipped one not enabled, which the build checked", async () => {
    editApproval({ auto_approve: ['tag:read', 'name:some_dev_tool'], auto_deny: ['name:file_write', 'name:local_shell'] });
    const { code, stderr } = await writeCall();
    expect(code).toBe(1);
    expect(stderr).not.toContain('FORGE_APPROVAL_UNMATCHED');
    expect(stderr).toContain('refused by the approval rule "name:file_write"');
  });

  it('checks rules without globs without loading the vendor libraries (picomatch), which a glob rule loads', async () => {
    writeFileSync(agentJson, built);
    // Gone, the file would be refused (FORGE_BUNDLE_TAMPERED) by whatever loads it: `tools` runs no start-time verification.
    const libs = join(project, '.forge-output', 'vendor', 'libs.cjs');
    const kept = readFileSync(libs);
    rmSync(libs);
    const tools = (...options: string[]) => runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'tools', ...options], { cwd: project });
    try {
      const literal = await tools('--auto-deny', 'category:builtin');
      expect(literal.code, literal.stderr).toBe(0);
      expect(literal.stdout).toContain('file_write');
      const glob = await tools('--auto-approve', 'name:file_*');
      expect(glob.code).toBe(1);
      expect(glob.stderr).toContain('FORGE_BUNDLE_TAMPERED vendor/libs.cjs is missing beside runtime.mjs');
    } finally {
      writeFileSync(libs, kept);
    }
  });
});
