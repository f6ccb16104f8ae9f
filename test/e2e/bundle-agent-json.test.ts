/**
 * A bundle whose agent.json was edited by hand or damaged: every command that reads it (`tools`, `call`,
 * `serve` with FORGE_VERIFY=off, `doctor`) says FORGE_AGENT_JSON at its place in agent.json and exits 1,
 * with --json the failure as every command gives it, and never an internal error or a stack trace.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { forge, runProcess, writeProject } from '../helpers/project.ts';

let project: string;
let agentJson: string;
let built: string;

beforeAll(async () => {
  project = writeProject({ 'forge.yaml': 'agent_id: damaged\nversion: 1.0.0\ndescription: x\ntools:\n  - file_read\n' });
  const result = await forge(['build', '--prod'], project);
  expect(result.code, result.stderr).toBe(0);
  agentJson = join(project, '.forge-output', 'agent.json');
  built = readFileSync(agentJson, 'utf8');
}, 120_000);

const bundle = (...args: string[]) => runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), ...args], { cwd: project, env: { FORGE_VERIFY: 'off' } });

function expectRefused(result: { code: number | null; stderr: string }, place: string, message: string): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toContain(`.forge-output/agent.json:${place} FORGE_AGENT_JSON ${message}`);
  expect(result.stderr).toContain('run forge build to write agent.json again');
  expect(result.stderr).not.toContain('FORGE_INTERNAL');
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe("a bundle's agent.json that no command can read", () => {
  it('is refused at the place JSON.parse stopped, by every command that reads it', async () => {
    writeFileSync(agentJson, '{bad');
    for (const args of [['tools'], ['call', 'file_read', '{"path":"forge.yaml"}'], ['serve', '--port', '0'], ['doctor']]) {
      expectRefused(await bundle(...args), '1:2', 'agent.json is not JSON:');
    }
  });

  it('is refused at its end when a copy cut it short', async () => {
    const cut = built.slice(0, Math.floor(built.length / 2));
    writeFileSync(agentJson, cut);
    const lines = cut.split('\n');
    expectRefused(await bundle('tools'), `${lines.length}:${lines[lines.length - 1].length + 1}`, 'agent.json is not JSON:');
  });

  it('is refused when its tools are not a list of named tools, at the "tools" key', async () => {
    const manifest = JSON.parse(built);
    const tools = manifest.tools;
    manifest.tools = { x: 1 };
    let text = JSON.stringify(manifest, null, 2);
    writeFileSync(agentJson, text);
    const place = (t: string) => {
      const before = t.slice(0, t.indexOf('"tools"'));
      return `${before.split('\n').length}:${before.length - before.lastIndexOf('\n')}`;
    };
    expectRefused(await bundle('tools'), place(text), 'agent.json has "tools" that is not a list of tools');
    manifest.tools = [...tools, { description: 'no name' }];
    text = JSON.stringify(manifest, null, 2);
    writeFileSync(agentJson, text);
    expectRefused(await bundle('call', 'file_read', '{"path":"forge.yaml"}'), place(text), `agent.json tools[${tools.length}] has no name`);
  });

  it('fails with --json as every command fails: one document on stdout with its code and place', async () => {
    writeFileSync(agentJson, '{bad');
    const { code, stdout } = await bundle('call', 'file_read', '{"path":"forge.yaml"}', '--json');
    expect(code).toBe(1);
    const failure = JSON.parse(stdout);
    expect(failure).toMatchObject({ ok: false, error: { code: 'FORGE_AGENT_JSON', file: '.forge-output/agent.json', line: 1, column: 2 } });
  });

  it('runs again once agent.json is the one the build wrote', async () => {
    writeFileSync(agentJson, built);
    const { code, stdout } = await bundle('tools');
    expect(code).toBe(0);
    expect(stdout).toContain('file_read');
  });
});
