/**
 * YAML tools, a meta-tool (with a tool from the user scope) and composed
 * TypeScript tools run from the built bundle, copied into a directory that
 * holds nothing else — with the approval policy applied to what they call.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { deployBundle, fixtureProject, forge, runProcess, tempDir } from '../helpers/project.ts';

let bundleDir: string;
let workDir: string;

beforeAll(async () => {
  const home = tempDir('forge-home-');
  mkdirSync(join(home, 'tools'));
  writeFileSync(
    join(home, 'tools', 'tally.yaml'),
    'description: Counts words.\ntags: [read]\nparameters:\n  items: { type: string }\nrun: [python3, -c, "import sys; print(len(sys.argv[1].split()))", "{items}"]\n',
  );
  const project = fixtureProject('composed');
  const built = await forge(['build', '--prod'], project, { FORGE_HOME: home });
  expect(built.code, built.stderr).toBe(0);
  ({ workDir, bundle: bundleDir } = deployBundle(project));
});

const runtime = (args: string[]) => runProcess(process.execPath, [join(bundleDir, 'runtime.mjs'), ...args], { cwd: workDir, env: { FORGE_HOME: join(workDir, 'no-home') } });
const call = (name: string, args: unknown, ...flags: string[]) => runtime(['call', name, JSON.stringify(args), ...flags]);

describe('a bundle with YAML and composed tools', () => {
  it('lists every tool, the user-scope one included', async () => {
    const { code, stdout } = await runtime(['tools']);
    expect(code).toBe(0);
    expect(stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0])).toEqual(['count', 'note_write', 'save_each', 'save_shouted', 'shout', 'shout_and_count', 'tally']);
  });

  it('records composedOf, tags and schemas in agent.json', () => {
    const manifest = JSON.parse(readFileSync(join(bundleDir, 'agent.json'), 'utf8')) as AgentManifest;
    const byName = Object.fromEntries(manifest.tools.map((t) => [t.name, t]));
    expect(byName.shout_and_count).toMatchObject({ composedOf: ['shout', 'count', 'tally'], tags: ['read'], source: { kind: 'yaml', path: 'tools/shout_and_count.yaml' } });
    expect(byName.save_shouted).toMatchObject({ composedOf: ['shout', 'note_write'], singleConfirmation: true, tags: ['write'], source: { kind: 'typescript', path: 'runtime.mjs' } });
    expect(byName.tally.source).toMatchObject({ kind: 'yaml', path: 'tools/@user/tally.yaml' });
    expect(byName.note_write.inputSchema).toMatchObject({ required: ['file', 'text'] });
  });

  it('runs a YAML tool, with a hostile value arriving as itself', async () => {
    const { code, stdout, stderr } = await call('shout', { text: "it's $(touch pwned) `id`" });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe("IT'S $(TOUCH PWNED) `ID`\n");
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
  });

  it('runs a meta-tool that calls YAML tools, one of them from the user scope', async () => {
    const { code, stdout, stderr } = await call('shout_and_count', { text: 'two words' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe('TWO WORDS (9 characters, tally 2)\n');
  });

  it('runs a singleConfirmation TypeScript tool: naming it approves everything it does', async () => {
    const { code, stdout } = await call('save_shouted', { text: 'saved once', file: 'once.txt' });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ saved: 'once.txt', text: 'SAVED ONCE' });
    expect(readFileSync(join(workDir, 'once.txt'), 'utf8')).toBe('SAVED ONCE');
  });

  it('refuses a sub-call that needs confirmation when there is no terminal, unless --yes', async () => {
    const refused = await call('save_each', { text: 'x', file: 'each.txt' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('FORGE_APPROVAL_REQUIRED');
    expect(refused.stderr).toContain('tool "note_write" needs a person\'s confirmation');
    expect(existsSync(join(workDir, 'each.txt'))).toBe(false);

    const approved = await call('save_each', { text: 'x', file: 'each.txt' }, '--yes');
    expect(approved.code, approved.stderr).toBe(0);
    expect(readFileSync(join(workDir, 'each.txt'), 'utf8')).toBe('X');
  });

  it('lets --auto-deny refuse a sub-tool even with --yes', async () => {
    const { code, stderr } = await call('save_shouted', { text: 'x', file: 'denied.txt' }, '--yes', '--auto-deny', 'name:note_*');
    expect(code).toBe(1);
    expect(stderr).toContain('refused by the approval rule "name:note_*"');
    expect(existsSync(join(workDir, 'denied.txt'))).toBe(false);
  });

  it("refuses a --auto-deny that misspells one of the bundle's tools before the call runs, and warns of a misspelt --auto-approve, as forge tool run does", async () => {
    const typo = await call('save_shouted', { text: 'x', file: 'typo.txt' }, '--yes', '--auto-deny', 'name:note_wrte');
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toContain('FORGE_APPROVAL_UNMATCHED --auto-deny rule "name:note_wrte" matches no tool: no tool is named "note_wrte", so "note_write" is not refused');
    expect(typo.stderr).toContain('did you mean "name:note_write"?');
    expect(existsSync(join(workDir, 'typo.txt'))).toBe(false);
    const approve = await call('count', { text: 'a b' }, '--auto-approve', 'tag:wirte');
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('FORGE_APPROVAL_UNMATCHED --auto-approve rule "tag:wirte" matches no tool: no tool is tagged "wirte"');
  });
});
