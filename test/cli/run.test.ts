/** `forge run` and `forge chat` from a project's sources: dev mode, hot reload, the terminal conversation. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { isAlive } from '../helpers/processes.ts';
import { forgeBin, runProcess, writeProject, minimalConfig } from '../helpers/project.ts';
import { startScriptedOpenAI } from '../helpers/scripted-llm.ts';

const greet = (greeting: string) => `"""\nTool: greet\nDescription: Greet someone.\nTags: read\n\nInput:\n  name (str): Who.\n"""\nimport os\n\nWORKER = os.urandom(8).hex()\n\ndef execute(args):\n    return {"greeting": "${greeting}, " + args["name"], "worker": WORKER}\n`;
const devTool = '"""\nTool: dev_only\nDescription: A development tool.\nCategory: dev\n"""\n\ndef execute(args):\n    return "dev"\n';

const run = (project: string, args: string[]) => startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth', ...args], { cwd: project });
const call = async (url: string, tool: string, args: unknown): Promise<any> => (await fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) })).json();
const toolNames = async (url: string): Promise<string[]> => ((await (await fetch(`${url}/tools`)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name);

describe('forge run', () => {
  it.each([
    ['an unknown state store', { FORGE_STATE_URL: 'redis://cache:6379' }, 'unknown state store "redis://cache:6379"', 'use file:'],
    ['a lease too short', { FORGE_LEASE: '1ms' }, 'FORGE_LEASE="1ms" is not a duration of at least 200ms', 'with its unit'],
    // Refused before the store is opened: no database needed to see it.
    ['a task retention without its unit', { FORGE_STATE_URL: 'postgres://forge@127.0.0.1:1/forge', FORGE_TASK_RETENTION: '30' }, 'FORGE_TASK_RETENTION="30" is not a duration of at least 1m, nor off', 'e.g. 30d'],
    ['a conversation retention without its unit', { FORGE_STATE_URL: 'postgres://forge@127.0.0.1:1/forge', FORGE_CONVERSATION_RETENTION: '90' }, 'FORGE_CONVERSATION_RETENTION="90" is not a duration of at least 1m, nor off', 'off keeps conversations forever'],
    ['a conversation retention without its unit, with the file: store', { FORGE_CONVERSATION_RETENTION: '90 days' }, 'FORGE_CONVERSATION_RETENTION="90 days" is not a duration of at least 1m, nor off', 'e.g. 30d'],
    // Taken silently, state meant for a mounted volume would stay in the container, and go with it.
    ['a path for the file store', { FORGE_STATE_URL: 'file:/data/state' }, 'the file: store keeps its state in .forge/ in the work dir, not at "/data/state"', 'mount that folder at .forge/'],
  ])('refuses %s with FORGE_STATE_CONFIG and its hint, no stack trace', async (_what, env, message, hint) => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const { code, stderr } = await runProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project, env: { ...process.env, ...env } });
    expect(code).toBe(1);
    expect(stderr).toContain(`FORGE_STATE_CONFIG ${message}`);
    expect(stderr).toContain(hint);
    expect(stderr).not.toMatch(/--verbose for the stack|\n\s+at /);
  });

  it('serves the tools from sources, without dev tools', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet('Hello'), 'tools/dev_only.py': devTool });
    const agent = await run(project, []);
    try {
      const names = await toolNames(agent.url);
      expect(names).toEqual(['greet']);
      expect(await call(agent.url, 'greet', { name: 'Ada' })).toMatchObject({ ok: true, value: { greeting: 'Hello, Ada' } });
    } finally {
      expect(await agent.stop()).toBe(0);
    }
  });

  it('--dev includes dev tools, logs each call, and reloads an edited tool without a restart', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet('Hello'), 'tools/dev_only.py': devTool });
    const agent = await run(project, ['--dev']);
    try {
      const names = await toolNames(agent.url);
      expect(names).toEqual(['dev_only', 'greet']);
      const before = await call(agent.url, 'greet', { name: 'Ada' });
      expect(before.value.greeting).toBe('Hello, Ada');
      await agent.waitFor(/tool greet \{"name":"Ada"\} \d+ ms ok \d+ B/);

      writeFileSync(join(project, 'tools/greet.py'), greet('Bonjour'));
      await agent.waitFor('reloaded greet');
      const after = await call(agent.url, 'greet', { name: 'Ada' });
      expect(after.value.greeting).toBe('Bonjour, Ada');
      // A new worker serves the new version; the server itself never restarted.
      // (Not its pid: inside the sandbox's PID namespace every worker may have the same one.)
      expect(after.value.worker).not.toBe(before.value.worker);
      expect(agent.child.exitCode).toBeNull();

      writeFileSync(join(project, 'tools/wave.py'), greet('Wave').replace('Tool: greet', 'Tool: wave'));
      await agent.waitFor('added wave');
      expect((await call(agent.url, 'wave', { name: 'Bo' })).value.greeting).toBe('Wave, Bo');
    } finally {
      await agent.stop();
    }
  });

  it('lets an in-flight call finish on the old version during a reload', async () => {
    // The tool says (on stderr, which reaches the server log) that the call has started:
    // the edit lands while the old version is certainly running, however slow the machine.
    const slow = (word: string) => `"""\nTool: slow\nDescription: Slow.\nTags: read\n"""\nimport sys, time\n\ndef execute(args):\n    print("started ${word}", file=sys.stderr, flush=True)\n    time.sleep(1.5)\n    return "${word}"\n`;
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/slow.py': slow('old') });
    const agent = await run(project, ['--dev']);
    try {
      const inFlight = call(agent.url, 'slow', {});
      await agent.waitFor('slow │ started old');
      writeFileSync(join(project, 'tools/slow.py'), slow('new'));
      await agent.waitFor('reloaded slow');
      expect((await inFlight).value).toBe('old');
      expect((await call(agent.url, 'slow', {})).value).toBe('new');
    } finally {
      await agent.stop();
    }
  });

  it('stops at start when a required MCP server cannot be reached', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('mcp:\n  servers:\n    - name: broken\n      transport: stdio\n      command: /nonexistent/mcp-server\n      required: true\n') });
    const result = await runProcess(process.execPath, [forgeBin, 'run', '--no-auth', '--port', '0'], { cwd: project });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('broken');
  });

  it('says at start when the model has no API key, and serves the tools', async () => {
    const model = 'model:\n  provider: openai\n  name: gpt-4o-mini\n  api_key_env: RUN_KEY_NEVER_SET\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(model), 'tools/greet.py': greet('Hello') });
    const agent = await run(project, []);
    try {
      await agent.waitFor('model openai:gpt-4o-mini has no API key (FORGE_MODEL_KEY): RUN_KEY_NEVER_SET is not set, nor RUN_KEY_NEVER_SET_FILE; messages to it will fail until it is (the tools are served)');
      expect(await call(agent.url, 'greet', { name: 'Ada' })).toMatchObject({ ok: true });
    } finally {
      await agent.stop();
    }
    // With the key in a file, nothing to say.
    const withFile = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project, env: { RUN_KEY_NEVER_SET_FILE: join(project, 'forge.yaml') } });
    try {
      expect(withFile.output()).not.toContain('FORGE_MODEL_KEY');
    } finally {
      await withFile.stop();
    }
  });

  it('stops at start, with FORGE_MODEL_KEY naming the variable and the path, when the model key file cannot be read', async () => {
    const model = 'model:\n  provider: openai\n  name: gpt-4o-mini\n  api_key_env: RUN_KEY\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(model) });
    const missing = join(project, 'no-such-key');
    const result = await runProcess(process.execPath, [forgeBin, 'run', '--no-auth', '--port', '0'], { cwd: project, env: { RUN_KEY_FILE: missing } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`✘ FORGE_MODEL_KEY RUN_KEY_FILE names ${missing}, which cannot be read: there is no such file\n  hint: put the value there (a mounted secret), or unset RUN_KEY_FILE and set RUN_KEY\n`);
    expect(result.stderr).not.toContain('ENOENT');
  });

  it('exits 2, with FORGE_SERVE_CONFIG naming the variable and the path and saying why in words, when FORGE_AUTH_TOKEN_FILE cannot be read', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const missing = join(project, 'no-such-token');
    const result = await runProcess(process.execPath, [forgeBin, 'run', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: missing } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: FORGE_SERVE_CONFIG FORGE_AUTH_TOKEN_FILE names ${missing}, which cannot be read: there is no such file (mount the token file there (a Secret volume), or set FORGE_AUTH_TOKEN instead)\n`);
    expect(result.stderr).not.toContain('ENOENT');
  });

  it('exits 2 for --no-auth on a public host', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const result = await runProcess(process.execPath, [forgeBin, 'run', '--host', '0.0.0.0', '--no-auth', '--port', '0'], { cwd: project });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('loopback');
  });
});

/** A Python tool that says it has started (its worker's pid, in the work dir) and then takes far longer than the test waits. */
const SLOW_PY = '"""\nTool: slow\nDescription: Sleeps.\nTags: read\n"""\nimport os\nimport time\n\n\ndef execute(args):\n    with open("slow.pid.tmp", "w") as f:\n        f.write(str(os.getpid()))\n    os.rename("slow.pid.tmp", "slow.pid")\n    time.sleep(600)\n    return "woke"\n';

describe('forge run stopped twice (Ctrl-C, then Ctrl-C again while it finishes a call; SIGTERM; SIGHUP, its terminal closed)', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as NodeJS.Signals[])('%s twice exits at once and takes the busy tool worker with it', async (signal) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/slow.py': SLOW_PY });
    // Unsandboxed, so the pid the tool writes is one this test can see.
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project, env: { FORGE_SANDBOX: 'off' } });
    const pidFile = join(project, 'slow.pid');
    let pid: number | undefined;
    try {
      const pending = fetch(`${agent.url}/tools/slow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => undefined);
      while (agent.child.exitCode === null && !existsSync(pidFile)) await new Promise((resolve) => setTimeout(resolve, 20));
      pid = Number(readFileSync(pidFile, 'utf8'));
      expect(isAlive(pid)).toBe(true);
      agent.child.kill(signal);
      // The first waits for the call; the second does not.
      await agent.waitFor(`${signal}: finishing in-flight requests`);
      const code = await agent.stop(signal);
      expect(code, agent.output()).toBe(130);
      await pending;
      // SIGKILL is sent before forge exits; on a loaded machine the worker may take a moment to be gone.
      for (let i = 0; i < 200 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(isAlive(pid), 'the tool worker outlived forge run').toBe(false);
    } finally {
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});

// forge run ignored FORGE_DRAIN_DELAY (and FORGE_SHUTDOWN_GRACE): it stopped at once, a load balancer's requests reset.
describe('forge run stopped as the bundle\'s serve is', () => {
  it('drains for FORGE_DRAIN_DELAY, /readyz 503 while it still serves; a second Ctrl-C during the drain exits at once', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project, env: { FORGE_DRAIN_DELAY: '10m' } });
    agent.child.kill('SIGINT');
    await agent.waitFor('SIGINT: draining for 600000 ms, then finishing in-flight requests');
    const ready = await fetch(`${agent.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, reason: 'shutting down' });
    expect((await fetch(`${agent.url}/tools`)).status).toBe(200);
    expect(await agent.stop('SIGINT'), agent.output()).toBe(130);
  });
});

describe('forge chat', () => {
  it('shows each tool call and its result inline', async () => {
    const llm = await startScriptedOpenAI([{ toolCalls: [{ name: 'greet', arguments: { name: 'Ada' } }] }, (body) => ({ text: `The tool said ${JSON.parse(body.messages.at(-1).content).greeting}.` })]);
    const project = writeProject({ 'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\n`), 'tools/greet.py': greet('Hi') });
    const result = await runProcess(process.execPath, [forgeBin, 'chat'], { cwd: project, input: 'Please greet Ada\n/exit\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('→ greet {"name":"Ada"}');
    expect(result.stdout).toMatch(/← greet \{"greeting":"Hi, Ada"/);
    expect(result.stdout).toContain('The tool said Hi, Ada.');
  });

  it('says clearly when no model is configured', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const result = await runProcess(process.execPath, [forgeBin, 'chat'], { cwd: project, input: 'hello\n' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('no model configured');
  });
});
