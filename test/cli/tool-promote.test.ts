/**
 * `forge tool forged` and `forge tool promote`: tools a built agent forged
 * (stored under its work dir's .forge/forged/) are listed, shown, removed,
 * and promoted into tools/ — sandboxed code as a JS tool with a docstring,
 * a composition as a YAML meta-tool, test cases beside them — so the next
 * build has them in agent.json and the bundle runs them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { addNumbers as addNumbersRequest, calcJson as calcJsonRequest } from '../helpers/forge-requests.ts';
import { forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

const addNumbers = { ...addNumbersRequest, scope: 'agent' };
const calcJson = { ...calcJsonRequest, scope: 'agent' };

let project: string;
const runtime = () => join(project, '.forge-output', 'runtime.mjs');
const call = (name: string, args: unknown) => runProcess(process.execPath, [runtime(), 'call', name, JSON.stringify(args), '--json', '--workdir', project], { cwd: project });

beforeAll(async () => {
  project = writeProject({ 'forge.yaml': minimalConfig('tools: [math_calculate, json_parse]\nemergent: { allow_agent_scope: true, timeout: 3 }\n') });
  const built = await forge(['build'], project);
  expect(built.code, built.stderr).toBe(0);
  for (const request of [addNumbers, calcJson, { ...addNumbers, name: 'scratch' }]) {
    const forged = await call('forge_tool', request);
    expect(forged.code, forged.stderr + forged.stdout).toBe(0);
    expect(JSON.parse(forged.stdout).value).toMatchObject({ success: true, tier: 'agent' });
  }
}, 120_000);

describe('forge tool describe forge_tool', () => {
  it('shows the forge request schema, enabled by emergent:, and agent.json records it', async () => {
    const described = await forge(['tool', 'describe', 'forge_tool', '--json'], project);
    expect(JSON.parse(described.stdout)).toMatchObject({ enabled: true, tool: { name: 'forge_tool', tags: ['run', 'emergent'], inputSchema: { required: expect.arrayContaining(['implementation', 'testCases']) } } });
    const manifest = JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8'));
    expect(manifest.emergent).toMatchObject({ allow_agent_scope: true, timeout: 3 });
    expect(manifest.tools.find((t: { name: string }) => t.name === 'forge_tool').inputSchema.properties.implementation.oneOf).toHaveLength(2);
  });
});

describe('forge tool forged', () => {
  it("runs a session's own forged tool for the person at the command line, from the bundle and from sources", async () => {
    // As if a conversation had forged it: no front end's caller but that conversation sees it.
    const file = join(project, '.forge', 'forged', 'scratch', 'tool.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), scope: 'session', tier: 'session', owner: 'context:someone' }));
    expect(JSON.parse((await call('scratch', { a: 2, b: 3 })).stdout)).toMatchObject({ ok: true, value: { sum: 5 } });
    const fromSources = await forge(['tool', 'run', 'scratch', '{"a": 2, "b": 40}', '--json'], project);
    expect(JSON.parse(fromSources.stdout), fromSources.stderr).toMatchObject({ ok: true, value: { sum: 42 } });
  });

  it('lists, shows and removes what the agent forged', async () => {
    const listed = await forge(['tool', 'forged', 'list', '--json'], project);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).map((t: { name: string; mode: string }) => [t.name, t.mode])).toEqual([['add_numbers', 'sandbox'], ['calc_json', 'compose'], ['scratch', 'sandbox']]);
    const shown = await forge(['tool', 'forged', 'show', 'add_numbers'], project);
    expect(shown.stdout).toContain('return { sum: input.a + input.b }');
    expect(shown.stdout).toContain('2 of 2 passed');
    expect((await forge(['tool', 'forged', 'remove', 'scratch'], project)).code).toBe(0);
    expect(existsSync(join(project, '.forge', 'forged', 'scratch'))).toBe(false);
    const missing = await forge(['tool', 'forged', 'show', 'scratch'], project);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no forged tool named "scratch"');
  });
});

describe('forge tool promote', () => {
  it('writes the tools into tools/, and the next build has them in agent.json and runs them from the bundle', async () => {
    for (const name of ['add_numbers', 'calc_json']) {
      const promoted = await forge(['tool', 'promote', name], project);
      expect(promoted.code, promoted.stderr).toBe(0);
    }
    const js = readFileSync(join(project, 'tools', 'add_numbers.js'), 'utf8');
    expect(js).toMatch(/^\/\*\*\n \* Tool: add_numbers\n \* Description: Add two numbers\.\n/);
    expect(js).toContain(' *   a (float): First.');
    expect(JSON.parse(readFileSync(join(project, 'tools', 'add_numbers.tests.json'), 'utf8')).testCases).toEqual(addNumbers.testCases);
    expect(readFileSync(join(project, 'tools', 'calc_json.yaml'), 'utf8')).toContain('tool: math_calculate');
    expect(existsSync(join(project, '.forge', 'forged', 'add_numbers'))).toBe(false);

    const built = await forge(['build'], project);
    expect(built.code, built.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8'));
    const byName = Object.fromEntries(manifest.tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.add_numbers).toMatchObject({ category: 'custom', source: { kind: 'javascript' }, inputSchema: { required: ['a', 'b'] } });
    expect(byName.calc_json).toMatchObject({ category: 'custom', source: { kind: 'yaml' }, composedOf: ['math_calculate', 'json_parse'] });

    expect(JSON.parse((await call('add_numbers', { a: 20, b: 22 })).stdout)).toMatchObject({ ok: true, value: { sum: 42 } });
    expect(JSON.parse((await call('calc_json', { expression: '2+3' })).stdout)).toMatchObject({ ok: true, value: { result: 5 } });
    const fromSources = await forge(['tool', 'run', 'add_numbers', '--param', 'a=1', '--param', 'b=2', '--json'], project);
    expect(JSON.parse(fromSources.stdout)).toMatchObject({ ok: true, value: { sum: 3 } });
  });

  it('refuses a name that is not forged, with a hint', async () => {
    const result = await forge(['tool', 'promote', 'nothing_here'], project);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no forged tool named "nothing_here"');
  });
});
