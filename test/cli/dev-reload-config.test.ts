/**
 * `forge run --dev` and forge.yaml's agent-wide sections, in a real process:
 * a saved `model:` (with the egress it needs), `approval:` and
 * `env_passthrough:` are in force from the next turn or call; a section read
 * only at start (`server:`) is said to need a restart, never ignored. A
 * saved `approval:` does not wait for pip.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { devNull } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../helpers/scripted-llm.ts';

const devServer = (project: string, env: NodeJS.ProcessEnv = {}) => startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env });
const post = async (url: string, tool: string, args: unknown = {}) => {
  const res = await fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as any };
};
/** One A2A message/send: the task's state and the text of its reply. */
const send = async (url: string, text: string, contextId: string) => {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: `m-${contextId}`, contextId, parts: [{ kind: 'text', text }] } } }),
  });
  const task = ((await res.json()) as any).result;
  return { state: task?.status?.state as string, text: JSON.stringify(task) };
};
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Polls until `probe` holds (the reload is asynchronous; never a fixed sleep). */
async function until(probe: () => Promise<boolean> | boolean, what: string, agent: AgentProcess, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server output:\n${agent.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A package index on loopback that holds every request until released, then answers 404 (no such package):
 * a pip run that lasts as long as the test wants, then fails. `requested` resolves at its first request.
 */
async function heldIndex() {
  const held: ServerResponse[] = [];
  let released = false;
  let requested!: () => void;
  const firstRequest = new Promise<void>((resolve) => (requested = resolve));
  const notFound = (res: ServerResponse) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  const server = createServer((_req, res) => {
    requested();
    if (released) notFound(res);
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/simple/`,
    requested: firstRequest,
    holding: () => !released && held.length > 0,
    release() {
      released = true;
      for (const res of held.splice(0)) notFound(res);
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const writer = `"""\nTool: writer\nDescription: Writes nothing, but says it may.\nTags: write\n"""\n\ndef execute(args):\n    return {"wrote": True}\n`;

describe('forge run --dev and forge.yaml sections', () => {
  it('answers with the model a save names, reached through the egress the save allows, and counts it under its name', async () => {
    const first = await startScriptedOpenAI([{ text: 'answer from first' }]);
    const second = await startScriptedOpenAI([{ text: 'answer from second' }]);
    const model = (name: string, llm: ScriptedServer) => minimalConfig(`model:\n  provider: openai\n  name: ${name}\n  base_url: ${llm.url}/v1\n`);
    const project = writeProject({ 'forge.yaml': model('model-first', first) });
    const agent = await devServer(project);
    try {
      expect((await send(agent.url, 'hello', 'c1')).text).toContain('answer from first');

      // Another server on another port: the old egress policy allows only the first one's port.
      writeFileSync(join(project, 'forge.yaml'), model('model-second', second));
      await agent.waitFor(/forge\.yaml: [^\n]*model \(openai:model-second\)[^\n]*changed/);
      const reply = await send(agent.url, 'hello again', 'c2');
      expect(reply.text).toContain('answer from second');
      expect(second.bodies[0].model).toBe('model-second');
      expect(first.bodies).toHaveLength(1);
      expect(await (await fetch(`${agent.url}/metrics`)).text()).toMatch(/model="openai:model-second"/);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it("sends a saved model.extra_body from the next turn, and the agent's config (debug_console, forge_tool's judge) shows the saved model", async () => {
    const llm = await startScriptedOpenAI([{ text: 'one' }, { text: 'two' }]);
    const config = (effort: string) => minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\n  extra_body: { reasoning_effort: ${effort} }\ntools:\n  - debug_console\n`);
    const project = writeProject({ 'forge.yaml': config('low') });
    const agent = await devServer(project);
    const shown = async () => (await post(agent.url, 'debug_console', { section: 'config' })).body.value?.config?.model?.extra_body;
    try {
      expect((await send(agent.url, 'hello', 'c1')).text).toContain('one');
      expect(await shown()).toEqual({ reasoning_effort: 'low' });
      writeFileSync(join(project, 'forge.yaml'), config('high'));
      await agent.waitFor(/forge\.yaml: [^\n]*model \(openai:scripted\)[^\n]*changed/);
      expect((await send(agent.url, 'hello again', 'c2')).text).toContain('two');
      expect(llm.bodies.map((b) => b.reasoning_effort)).toEqual(['low', 'high']);
      expect(await shown()).toEqual({ reasoning_effort: 'high' });
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('puts a saved approval policy in force for REST calls and the agent loop, looser and tighter alike', async () => {
    const llm = await startScriptedOpenAI([{ toolCalls: [{ name: 'writer', arguments: {} }] }, { toolCalls: [{ name: 'writer', arguments: {} }] }, { text: 'all written' }]);
    const config = (approval: string) => minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\napproval:\n  clients: policy\n${approval}`);
    const project = writeProject({ 'forge.yaml': config(''), 'tools/writer.py': writer });
    const agent = await devServer(project);
    try {
      expect((await post(agent.url, 'writer')).body.error.code).toBe('FORGE_APPROVAL_REQUIRED');
      expect((await send(agent.url, 'write it', 'before')).state).toBe('input-required');

      writeFileSync(join(project, 'forge.yaml'), config('  auto_approve: ["tag:read", "tag:write"]\n'));
      await agent.waitFor(/forge\.yaml: approval changed/);
      expect(await post(agent.url, 'writer')).toMatchObject({ status: 200, body: { value: { wrote: true } } });
      const turn = await send(agent.url, 'write it', 'after');
      expect(turn.state).toBe('completed');
      expect(turn.text).toContain('all written');

      // Tighter again: the deny rule wins from the next call on.
      writeFileSync(join(project, 'forge.yaml'), config('  auto_approve: ["tag:read", "tag:write"]\n  auto_deny: ["name:writer"]\n'));
      await until(() => count(agent.output(), 'forge.yaml: approval changed') === 2, 'the second approval change', agent);
      expect(await post(agent.url, 'writer')).toMatchObject({ status: 403, body: { error: { code: 'FORGE_TOOL_DENIED' } } });

      // A save that does not load (a misspelt section beside a looser policy) puts nothing in force, and says so.
      writeFileSync(join(project, 'forge.yaml'), `${config('  auto_approve: ["tag:read", "tag:write"]\n')}servr: {}\n`);
      await agent.waitFor(/forge\.yaml does not load, so nothing in it is in force yet: the approval rules of its last save that loaded still decide every call/);
      expect(await post(agent.url, 'writer')).toMatchObject({ status: 403, body: { error: { code: 'FORGE_TOOL_DENIED' } } });

      // The save that fixes it says so, and what it says is in force.
      expect(agent.output()).not.toContain('forge.yaml loads again');
      writeFileSync(join(project, 'forge.yaml'), config('  auto_approve: ["tag:read", "tag:write"]\n'));
      await agent.waitFor(/forge\.yaml loads again/);
      await until(async () => (await post(agent.url, 'writer')).status === 200, 'the fixed save in force', agent);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('puts a saved auto_deny in force while pip installs what the same save declares, and while a later save waits behind that reload; it stays when pip fails', async () => {
    const index = await heldIndex();
    const reader = `"""\nTool: reader\nDescription: Reads nothing.\nTags: read\n"""\n\ndef execute(args):\n    return {"read": True}\n`;
    const config = (deny: string) => minimalConfig(`approval:\n  auto_approve: ["tag:read", "tag:write"]\n  auto_deny: [${deny}]\n`);
    const project = writeProject({ 'forge.yaml': config(''), 'tools/writer.py': writer, 'tools/reader.py': reader });
    // pip asks only the held index (no pip.conf, no find-links), once, and waits for it as long as the test does.
    const pip = { PIP_CONFIG_FILE: devNull, PIP_INDEX_URL: index.url, PIP_FIND_LINKS: undefined, PIP_NO_INDEX: undefined, PIP_RETRIES: '0', PIP_DEFAULT_TIMEOUT: '600', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    const agent = await devServer(project, pip);
    try {
      expect((await post(agent.url, 'writer')).status).toBe(200);

      // One save: a tighter policy, and a package to install (pip then waits on the index).
      writeFileSync(join(project, 'forge.yaml'), config('"name:writer"'));
      writeFileSync(join(project, 'requirements.txt'), 'heldpkg\n');
      await Promise.race([index.requested, agent.waitFor(/FORGE_PYTHON/, 120_000).then(() => Promise.reject(new Error(`pip did not reach the index:\n${agent.output()}`)))]);
      await until(async () => (await post(agent.url, 'writer')).status === 403, 'writer refused while pip runs', agent);
      expect(index.holding()).toBe(true);
      expect((await post(agent.url, 'writer')).body.error.code).toBe('FORGE_TOOL_DENIED');
      expect((await post(agent.url, 'reader')).status).toBe(200);

      // A later save is queued behind the reload running pip: its approval is not.
      writeFileSync(join(project, 'forge.yaml'), config('"name:writer", "name:reader"'));
      await until(async () => (await post(agent.url, 'reader')).status === 403, 'reader refused while pip still runs', agent);
      expect(index.holding()).toBe(true);

      // pip fails; the reloads behind it run (a tool save after them says when they are done), and the rules stay.
      index.release();
      await agent.waitFor(/FORGE_PYTHON_DEPS[^\n]*heldpkg/, 60_000);
      writeFileSync(join(project, 'tools/writer.py'), writer.replace('True', '"again"'));
      await agent.waitFor(/reloaded writer/, 60_000);
      expect((await post(agent.url, 'writer')).body.error.code).toBe('FORGE_TOOL_DENIED');
      expect((await post(agent.url, 'reader')).body.error.code).toBe('FORGE_TOOL_DENIED');
      expect(count(agent.output(), 'forge.yaml: approval changed')).toBe(2);
    } finally {
      await agent.stop();
      index.close();
    }
  }, 240_000);

  it('gives the tools the variables a saved env_passthrough names, and says a changed server: needs a restart', async () => {
    const reader = `"""\nTool: reader\nDescription: Reads one variable.\nTags: read\n"""\nimport os\n\ndef execute(args):\n    return {"value": os.environ.get("DEV_RELOAD_PASSED")}\n`;
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/reader.py': reader });
    const agent = await devServer(project, { DEV_RELOAD_PASSED: 'passed through' });
    try {
      expect((await post(agent.url, 'reader')).body.value).toEqual({ value: null });
      writeFileSync(join(project, 'forge.yaml'), minimalConfig('env_passthrough: [DEV_RELOAD_PASSED]\n'));
      await until(async () => (await post(agent.url, 'reader')).body.value?.value === 'passed through', 'reader seeing the variable', agent);
      expect(agent.output()).toMatch(/forge\.yaml: env_passthrough changed/);

      writeFileSync(join(project, 'forge.yaml'), minimalConfig('env_passthrough: [DEV_RELOAD_PASSED]\nserver:\n  port: 9123\n'));
      await agent.waitFor(/forge\.yaml: server changed; [^\n]*restart forge run --dev/);
      // Still served where it was.
      expect((await post(agent.url, 'reader')).status).toBe(200);
    } finally {
      await agent.stop();
    }
  }, 120_000);
});
