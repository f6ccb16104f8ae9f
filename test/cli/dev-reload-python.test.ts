/**
 * `forge run --dev` hot reload and declared Python packages (PEP 723), with
 * local wheels in a find-links folder (the public index is not reachable): a
 * save that declares a new package installs it as a start would; one pip
 * cannot find leaves that tool unavailable with the located diagnostic while
 * the server and the other tools go on.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';
import { localWheel, pipFrom } from '../helpers/python-wheel.ts';

const plain = `"""\nTool: plain\nDescription: Needs no package.\nTags: read\n"""\n\ndef execute(args):\n    return {"plain": True}\n`;
const wrapping = (requirement: string, word = 'wrapped') =>
  `# /// script\n# dependencies = ["${requirement}"]\n# ///\n"""\nTool: wrap\nDescription: Wraps a word with a third-party package.\nTags: read\n"""\nimport tinyextra\n\n\ndef execute(args):\n    return tinyextra.wrap("${word}")\n`;

let wheels: string;
beforeAll(() => {
  wheels = localWheel('tinyextra', '0.1.0', 'def wrap(word):\n    return f"[{word}]"\n');
});

const devServer = (project: string) => startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env: pipFrom(wheels) });
const post = async (url: string, tool: string) => {
  const res = await fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, body: (await res.json()) as any };
};
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Polls until `probe` holds (the reload and its pip run are asynchronous; never a fixed sleep). */
async function until(probe: () => Promise<boolean>, what: string, agent: AgentProcess, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server output:\n${agent.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('forge run --dev and declared Python packages', () => {
  it('installs the package a newly added tool declares, once, and the tool answers', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/plain.py': plain });
    const agent = await devServer(project);
    try {
      writeFileSync(join(project, 'tools/wrap.py'), wrapping('tinyextra'));
      await agent.waitFor('added wrap', 60_000);
      expect(agent.output()).toContain('python: installing tinyextra');
      expect(await post(agent.url, 'wrap')).toMatchObject({ status: 200, body: { value: '[wrapped]' } });

      // A save that leaves the declarations as they were does not run pip again.
      writeFileSync(join(project, 'tools/wrap.py'), wrapping('tinyextra', 'again'));
      await until(async () => (await post(agent.url, 'wrap')).body.value === '[again]', 'wrap saying again', agent);
      expect(count(agent.output(), 'python: installing')).toBe(1);
      expect(agent.output()).not.toContain('Traceback');
    } finally {
      await agent.stop();
    }
  }, 180_000);

  it('keeps a tool whose package pip cannot find unavailable with FORGE_PYTHON_DEPS at its line; the other tools answer', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/plain.py': plain });
    const agent = await devServer(project);
    try {
      writeFileSync(join(project, 'tools/wrap.py'), wrapping('nosuchpackage'));
      await agent.waitFor('cannot load wrap', 60_000);
      // Shown at the terminal where it is declared, with the line.
      expect(agent.output()).toMatch(/✘ tools\/wrap\.py:2:\d+ FORGE_PYTHON_DEPS cannot install the Python package nosuchpackage \(declared in tools\/wrap\.py\): not found in the sources pip used \(no index; links /);
      const call = await post(agent.url, 'wrap');
      expect(call.status).toBe(503);
      expect(call.body.error).toMatchObject({ code: 'FORGE_TOOL_UNAVAILABLE', message: expect.stringMatching(/tools\/wrap\.py:2:\d+ FORGE_PYTHON_DEPS .*nosuchpackage/) });
      expect(await post(agent.url, 'plain')).toMatchObject({ status: 200, body: { value: { plain: true } } });

      // An edit that does not touch the declaration leaves it unavailable (it would fail at import), without another pip run.
      writeFileSync(join(project, 'tools/wrap.py'), wrapping('nosuchpackage', 'edited'));
      await until(async () => count(agent.output(), 'cannot load wrap') >= 2, 'the second reload of wrap', agent);
      expect((await post(agent.url, 'wrap')).status).toBe(503);
      expect(count(agent.output(), 'python: installing')).toBe(1);

      // Declaring one that exists installs it, and the tool answers.
      writeFileSync(join(project, 'tools/wrap.py'), wrapping('tinyextra', 'fixed'));
      await until(async () => (await post(agent.url, 'wrap')).body.value === '[fixed]', 'wrap fixed', agent);
      expect(agent.output()).not.toContain('ModuleNotFoundError');
      expect(agent.child.exitCode).toBeNull();
    } finally {
      await agent.stop();
    }
  }, 180_000);

  it('installs what a saved requirements.txt beside forge.yaml declares, and the tool that needed it loads', async () => {
    const needs = `"""\nTool: needs\nDescription: Uses a package requirements.txt declares.\nTags: read\n"""\nimport tinyextra\n\n\ndef execute(args):\n    return tinyextra.wrap("req")\n`;
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/plain.py': plain, 'tools/needs.py': needs });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'needs')).status).not.toBe(200);
      writeFileSync(join(project, 'requirements.txt'), 'tinyextra\n');
      await until(async () => (await post(agent.url, 'needs')).body.value === '[req]', 'needs answering', agent);
      expect(agent.output()).toContain('python: installing tinyextra');
    } finally {
      await agent.stop();
    }
  }, 180_000);
});
