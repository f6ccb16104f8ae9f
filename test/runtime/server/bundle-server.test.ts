/**
 * The built bundle as a server, from a directory holding only
 * .forge-output/: MCP clients (the SDK's, and the MCP Inspector CLI) over
 * stdio and Streamable HTTP, REST, auth, limits and a graceful stop.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { deployBundle, forge, repoRoot, runProcess, tempDir, writeProject, minimalConfig } from '../../helpers/project.ts';

let bundle: string;

beforeAll(async () => {
  const project = writeProject({
    'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'),
    'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return {"echo": args["message"]}\n',
    'tools/fail.py': '"""\nTool: fail_always\nDescription: Always fails.\nTags: write\n"""\n\ndef execute(args):\n    raise RuntimeError("it broke")\n',
    'tools/slow.py': '"""\nTool: slow\nDescription: Sleeps, then answers.\nTags: read\n\nInput:\n  seconds (float): How long.\n"""\nimport time\n\ndef execute(args):\n    time.sleep(args["seconds"])\n    return "slept"\n',
    'tools/untagged.ts': '/**\n * Tool: untagged\n * Description: Has no security tag.\n */\nexport function execute() { return 1; }\n',
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  bundle = deployBundle(project).bundle;
});

const serve = (args: string[], env: NodeJS.ProcessEnv = {}, cwd = tempDir()) =>
  startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', ...args], { cwd, env: { FORGE_AUTH_TOKEN: 'secret-token', ...env } });

describe('MCP over stdio', () => {
  it('lists and calls the tools with the SDK client', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(bundle, 'runtime.mjs'), '--stdio'], cwd: tempDir(), stderr: 'pipe' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['echo', 'fail_always', 'slow', 'untagged', 'uuid_generate']);
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(byName.echo.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(byName.fail_always.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.untagged.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.echo.inputSchema).toMatchObject({ required: ['message'] });

      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'over stdio' } });
      expect(echoed.structuredContent).toEqual({ echo: 'over stdio' });
      const failed = await client.callTool({ name: 'fail_always', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(JSON.stringify(failed.content)).toContain('RuntimeError: it broke');
      const invalid = await client.callTool({ name: 'echo', arguments: {} });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toContain('missing required argument \\"message\\"');
    } finally {
      await client.close();
    }
  });

  it('answers arguments that are not an object with -32602, as stateless HTTP does', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(bundle, 'runtime.mjs'), '--stdio'], cwd: tempDir(), stderr: 'pipe' }));
    try {
      const error = await client.request({ method: 'tools/call', params: { name: 'echo', arguments: ['not', 'an', 'object'] as unknown as Record<string, unknown> } }, CallToolResultSchema).catch((e: McpError) => e);
      expect(error).toMatchObject({ code: -32602, message: 'MCP error -32602: Invalid params: arguments must be an object' });
      expect((await client.callTool({ name: 'echo', arguments: { message: 'still fine' } })).structuredContent).toEqual({ echo: 'still fine' });
    } finally {
      await client.close();
    }
  });

  it('answers a line that is not JSON with -32700 and one that is no request with -32600 (id null), and keeps serving', async () => {
    const child = spawn(process.execPath, [join(bundle, 'runtime.mjs'), '--stdio'], { cwd: tempDir(), stdio: ['pipe', 'pipe', 'ignore'] });
    const answers: { id: unknown; error?: { code: number }; result?: unknown }[] = [];
    let buffered = '';
    const got = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
          answers.push(JSON.parse(buffered.slice(0, newline)));
          buffered = buffered.slice(newline + 1);
          if (answers.length === 4) resolve();
        }
      });
    });
    try {
      child.stdin.write('{bad json\nnull\n[{"jsonrpc":"2.0","id":6,"method":"ping"}]\n{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
      await got;
      expect(answers).toEqual([
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32700 }) },
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
        { jsonrpc: '2.0', id: 7, result: {} },
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('works with the MCP Inspector CLI', async () => {
    const inspector = join(repoRoot, 'node_modules', '.bin', 'mcp-inspector');
    const cwd = tempDir();
    const listed = await runProcess(inspector, ['--cli', process.execPath, join(bundle, 'runtime.mjs'), '--stdio', '--method', 'tools/list'], { cwd });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).toContain('echo');
    const called = await runProcess(inspector, ['--cli', process.execPath, join(bundle, 'runtime.mjs'), '--stdio', '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=from the inspector'], { cwd });
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout).structuredContent).toEqual({ echo: 'from the inspector' });
  });
});

describe('node runtime.mjs serve', () => {
  it('serves MCP over Streamable HTTP to the SDK client, with the token', async () => {
    const agent = await serve([]);
    try {
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer secret-token' } } }));
      expect((await client.listTools()).tools).toHaveLength(5);
      const result = await client.callTool({ name: 'uuid_generate', arguments: { version: 7 } });
      expect((result.structuredContent as { uuid: string }).uuid).toMatch(/^[0-9a-f-]{36}$/);
      await client.close();

      const unauthenticated = new Client({ name: 'test', version: '1.0.0' });
      await expect(unauthenticated.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)))).rejects.toThrow();
    } finally {
      expect(await agent.stop()).toBe(0);
    }
  });

  it('serves REST: list, describe, call, with status codes that say how it went', async () => {
    const agent = await serve([]);
    const auth = { authorization: 'Bearer secret-token' };
    try {
      expect(((await (await fetch(`${agent.url}/tools`, { headers: auth })).json()) as any).tools.map((t: { name: string }) => t.name)).toContain('echo');
      expect((await (await fetch(`${agent.url}/tools/echo`, { headers: auth })).json())).toMatchObject({ name: 'echo', category: 'custom' });
      const call = await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: auth, body: JSON.stringify({ message: 'rest' }) });
      expect(call.status).toBe(200);
      expect(await call.json()).toMatchObject({ ok: true, value: { echo: 'rest' } });
      expect((await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: auth, body: '{}' })).status).toBe(400);
      expect((await fetch(`${agent.url}/tools/nope`, { method: 'POST', headers: auth, body: '{}' })).status).toBe(404);
      expect((await fetch(`${agent.url}/tools/fail_always`, { method: 'POST', headers: auth, body: '{}' })).status).toBe(422);
      expect((await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: auth, body: 'nope' })).status).toBe(400);
      const tooBig = await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: auth, body: JSON.stringify({ message: 'x'.repeat(2 * 1024 * 1024) }) });
      expect(tooBig.status).toBe(413);
      expect((await fetch(`${agent.url}/readyz`)).status).toBe(200);
    } finally {
      await agent.stop();
    }
  });

  it('starts without a model and says so when asked for a task', async () => {
    const agent = await serve([]);
    try {
      const response = await fetch(`${agent.url}/a2a`, {
        method: 'POST',
        headers: { authorization: 'Bearer secret-token' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } } }),
      });
      expect(((await response.json()) as any).error.message).toContain('no model configured');
      expect(agent.output()).toContain('no model');
    } finally {
      await agent.stop();
    }
  });

  it('generates a token on first start outside the work dir, prints it once, and reuses it', async () => {
    const cwd = tempDir();
    const stateDir = join(tempDir(), 'state');
    const first = await serve([], { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: stateDir }, cwd);
    await first.stop();
    const [, tokenFile] = /saved in (\S+), outside the work dir/.exec(first.output())!;
    expect(tokenFile.startsWith(stateDir + '/')).toBe(true);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(existsSync(join(cwd, '.forge', 'runtime.token'))).toBe(false);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(first.output()).toContain(token);
    const second = await serve([], { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: stateDir }, cwd);
    try {
      expect(second.output()).not.toContain(token);
      expect((await fetch(`${second.url}/tools`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it('moves a token an earlier version left in the work dir out of it, and keeps using it', async () => {
    const cwd = tempDir();
    const stateDir = join(tempDir(), 'state');
    mkdirSync(join(cwd, '.forge'));
    writeFileSync(join(cwd, '.forge', 'runtime.token'), 'an-old-token-from-the-work-dir\n');
    const agent = await serve([], { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: stateDir }, cwd);
    try {
      expect(agent.output()).toMatch(/auth token moved out of the work dir: \S+runtime\.token -> \S+/);
      expect(existsSync(join(cwd, '.forge', 'runtime.token'))).toBe(false);
      expect((await fetch(`${agent.url}/tools`, { headers: { authorization: 'Bearer an-old-token-from-the-work-dir' } })).status).toBe(200);
    } finally {
      await agent.stop();
    }
  });

  it('says at start which state store it uses: the file store in the work dir', async () => {
    const cwd = tempDir();
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd, env: { FORGE_AUTH_TOKEN: 'tok' } });
    try {
      expect(agent.output()).toContain(`state: file store at ${join(cwd, '.forge')}`);
    } finally {
      await agent.stop();
    }
  });

  it('refuses --no-auth on a non-loopback host', async () => {
    const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--host', '0.0.0.0', '--port', '0', '--no-auth'], { cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--no-auth is only allowed on a loopback host');
  });

  it('allows --no-auth on loopback', async () => {
    const agent = await serve(['--no-auth'], { FORGE_AUTH_TOKEN: '' });
    try {
      expect((await fetch(`${agent.url}/tools`)).status).toBe(200);
    } finally {
      await agent.stop();
    }
  });

  it('finishes an in-flight call on SIGTERM, then exits', async () => {
    const agent = await serve([]);
    const call = fetch(`${agent.url}/tools/slow`, { method: 'POST', headers: { authorization: 'Bearer secret-token' }, body: JSON.stringify({ seconds: 1 }) });
    await new Promise((r) => setTimeout(r, 300));
    const exit = agent.stop('SIGTERM');
    const response = await call;
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).value).toBe('slept');
    expect(await exit).toBe(0);
    // Once stopping, it accepts no new connection.
    await expect(fetch(`${agent.url}/healthz`)).rejects.toThrow();
  });
});

describe('sessions', () => {
  it('keeps a conversation across a restart', async () => {
    const { startScriptedOpenAI } = await import('../../helpers/scripted-llm.ts');
    const llm = await startScriptedOpenAI([{ text: 'Hello Ada.' }, (body) => ({ text: `Earlier you said: ${body.messages[1].content}` })]);
    const project = writeProject({ 'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\n`) });
    expect((await forge(['build'], project)).code).toBe(0);
    const cwd = tempDir();
    const runtime = join(project, '.forge-output', 'runtime.mjs');
    const a2a = (url: string, text: string) =>
      fetch(`${url}/a2a`, { method: 'POST', headers: { authorization: 'Bearer t0ken-for-tests' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: `m-${text.length}`, contextId: 'ctx-restart', parts: [{ kind: 'text', text }] } } }) }).then((r) => r.json() as Promise<any>);
    const start = () => startAgentProcess(process.execPath, [runtime, 'serve', '--port', '0'], { cwd, env: { FORGE_AUTH_TOKEN: 't0ken-for-tests' } });

    const first = await start();
    const answer = await a2a(first.url, 'My name is Ada.');
    expect(answer.result.status.state).toBe('completed');
    await first.stop();
    expect(existsSync(join(cwd, '.forge', 'sessions', 'ctx-restart.json'))).toBe(true);

    const second = await start();
    try {
      const later = await a2a(second.url, 'What did I say?');
      expect(later.result.artifacts[0].parts[0].text).toBe('Earlier you said: My name is Ada.');
    } finally {
      await second.stop();
    }
  });
});

describe('model.extra_body in the built bundle', () => {
  it("adds each model's own fields to its requests, and Forge's fields stay Forge's", async () => {
    const { startScriptedAnthropic, startScriptedOpenAI } = await import('../../helpers/scripted-llm.ts');
    const main = await startScriptedOpenAI([{ status: 400, text: 'this deployment is paused' }]);
    const fallback = await startScriptedAnthropic([{ text: 'thought it over' }]);
    const project = writeProject({
      'forge.yaml': minimalConfig(
        `model:\n  provider: openai\n  name: scripted\n  base_url: ${main.url}/v1\n  extra_body: { reasoning_effort: low, chat_template_kwargs: { enable_thinking: false } }\n` +
          `  fallbacks:\n    - provider: anthropic\n      name: claude-scripted\n      base_url: ${fallback.url}\n      extra_body: { thinking: { type: enabled, budget_tokens: 1024 } }\n`,
      ),
    });
    expect((await forge(['build'], project)).code).toBe(0);
    const agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: tempDir() });
    try {
      const sent = await fetch(`${agent.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm-extra', parts: [{ kind: 'text', text: 'think it over' }] } } }) }).then((r) => r.json() as Promise<any>);
      expect(sent.result.artifacts[0].parts[0].text).toBe('thought it over');
    } finally {
      await agent.stop();
    }
    expect(main.bodies[0]).toMatchObject({ model: 'scripted', reasoning_effort: 'low', chat_template_kwargs: { enable_thinking: false } });
    expect(main.bodies[0]).not.toHaveProperty('thinking');
    expect(fallback.bodies[0]).toMatchObject({ model: 'claude-scripted', thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user' }] });
    expect(fallback.bodies[0]).not.toHaveProperty('reasoning_effort');
  });
});

// State (tokens, sessions) goes to the work dir, never into the bundle.
it('did not write into the bundle directory', () => {
  expect(existsSync(join(bundle, '.forge'))).toBe(false);
});

describe('approval in the built bundle', () => {
  it('pauses an A2A task for a write tool under forge.yaml\'s policy, and runs it once approved', async () => {
    const { startScriptedOpenAI } = await import('../../helpers/scripted-llm.ts');
    const llm = await startScriptedOpenAI([{ toolCalls: [{ id: 'w1', name: 'note', arguments: { text: 'hi' } }] }, (body) => ({ text: `saved: ${body.messages.at(-1).content}` })]);
    const project = writeProject({
      'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\napproval:\n  auto_approve: ["tag:read"]\n`),
      'tools/note.py': '"""\nTool: note\nDescription: Saves a note.\nTags: write\n\nInput:\n  text (str): The note.\n"""\nimport os\n\ndef execute(args):\n    open("note.txt", "w").write(args["text"])\n    return "ok"\n',
    });
    expect((await forge(['build'], project)).code).toBe(0);
    const cwd = tempDir();
    const agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd });
    const send = (message: Record<string, unknown>) =>
      fetch(`${agent.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: `m${Math.random()}`, ...message } } }) }).then((r) => r.json() as Promise<any>);
    try {
      const paused = await send({ parts: [{ kind: 'text', text: 'save hi' }] });
      expect(paused.result.status.state).toBe('input-required');
      expect(existsSync(join(cwd, 'note.txt'))).toBe(false);
      const done = await send({ taskId: paused.result.id, contextId: paused.result.contextId, parts: [{ kind: 'text', text: 'approve' }] });
      expect(done.result.status.state).toBe('completed');
      expect(readFileSync(join(cwd, 'note.txt'), 'utf8')).toBe('hi');
      expect(done.result.artifacts[0].parts[0].text).toBe('saved: ok');
    } finally {
      await agent.stop();
    }
  });
});
