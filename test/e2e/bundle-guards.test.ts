/**
 * The built bundle's edges that are not the sandbox: one boundary with
 * `forge run` (forge.yaml's workdir: carried in agent.json, --workdir and
 * FORGE_WORKDIR override), secrets from files (FORGE_AUTH_TOKEN_FILE, the
 * model key's <NAME>_FILE), and `--stdio` answering every call in flight
 * when its client closes stdin.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { forge, forgeBin, runProcess, tempDir, writeProject } from '../helpers/project.ts';

let project: string;
let bundle: string;

beforeAll(async () => {
  project = writeProject({
    'forge.yaml': 'agent_id: guards\nversion: 1.0.0\ndescription: x\nworkdir: data\nmodel: { provider: openai, name: scripted, base_url: "http://127.0.0.1:9/v1" }\ntools:\n  - file_read\n  - file_write\n',
    'tools/where.py': '"""\nTool: where\nDescription: Says where it runs.\nTags: read\n"""\nimport os\n\ndef execute(args):\n    return os.getcwd()\n',
    'tools/slow.py': '"""\nTool: slow\nDescription: Sleeps, then answers.\nTags: read\n\nInput:\n  seconds (float): How long.\n  tag (str): Echoed back.\n"""\nimport time\n\ndef execute(args):\n    time.sleep(args["seconds"])\n    return "done " + args["tag"]\n',
    'data/inside.txt': 'inside the work dir',
    'outside.txt': 'outside the work dir',
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  bundle = join(project, '.forge-output');
}, 120_000);

const runtime = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: options.cwd ?? project, env: { FORGE_AUTH_TOKEN: 't', ...options.env } });

describe('one boundary', () => {
  it('agent.json carries forge.yaml\'s workdir', () => {
    expect(JSON.parse(readFileSync(join(bundle, 'agent.json'), 'utf8')).workdir).toBe('data');
  });

  it('the bundle and forge tool run confine tools to the same work dir', async () => {
    const fromSources = await forge(['tool', 'run', 'where', '--json'], project);
    const fromBundle = await runtime(['call', 'where', '{}', '--json']);
    expect(JSON.parse(fromSources.stdout)).toMatchObject({ ok: true, value: join(project, 'data') });
    expect(JSON.parse(fromBundle.stdout)).toMatchObject({ ok: true, value: join(project, 'data') });
    for (const [path, ok] of [['inside.txt', true], ['../outside.txt', false]] as const) {
      const sources = JSON.parse((await forge(['tool', 'run', 'file_read', '--input', JSON.stringify({ path }), '--json'], project)).stdout);
      const built = JSON.parse((await runtime(['call', 'file_read', JSON.stringify({ path }), '--json'])).stdout);
      expect(sources.ok, path).toBe(ok);
      expect(built.ok, path).toBe(ok);
      if (ok) expect(built.value).toEqual(sources.value);
      else expect(built.error.code).toBe(sources.error.code);
    }
  });

  it('forge run serves from the same work dir as the bundle', async () => {
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: 't' }, ready: /on (http:\/\/\S+)/ });
    try {
      const res = await fetch(`${agent.url}/tools/where`, { method: 'POST', headers: { authorization: 'Bearer t' }, body: '{}' });
      expect(await res.json()).toMatchObject({ ok: true, value: join(project, 'data') });
    } finally {
      await agent.stop('SIGKILL');
    }
  });

  it('--workdir and FORGE_WORKDIR override it', async () => {
    const other = tempDir();
    expect(JSON.parse((await runtime(['call', 'where', '{}', '--json', '--workdir', other])).stdout).value).toBe(other);
    expect(JSON.parse((await runtime(['call', 'where', '{}', '--json'], { env: { FORGE_WORKDIR: other } })).stdout).value).toBe(other);
  });
});

describe("the agent's state dir", () => {
  it('the bundle\'s file tools neither plant a forged tool in it nor read it', async () => {
    mkdirSync(join(project, 'data', '.forge', 'sessions'), { recursive: true });
    writeFileSync(join(project, 'data', '.forge', 'sessions', 'other.json'), '{"secret": "SESSION-SECRET"}');
    const write = JSON.parse((await runtime(['call', 'file_write', JSON.stringify({ path: '.forge/forged/evil/tool.json', content: '{}' }), '--json'])).stdout);
    const read = JSON.parse((await runtime(['call', 'file_read', JSON.stringify({ path: '.forge/sessions/other.json' }), '--json'])).stdout);
    for (const result of [write, read]) expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_STATE' } });
    expect(existsSync(join(project, 'data', '.forge', 'forged'))).toBe(false);
    // The same tool still writes elsewhere in the work dir.
    expect(JSON.parse((await runtime(['call', 'file_write', JSON.stringify({ path: 'notes/a.txt', content: 'ok' }), '--json'])).stdout)).toMatchObject({ ok: true });
  });
});

describe("the work dir's repository", () => {
  it('the bundle\'s file tools set no core.fsmonitor and plant no hook for the host\'s git to run', async () => {
    const config = JSON.parse((await runtime(['call', 'file_write', JSON.stringify({ path: '.git/config', content: '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' }), '--json'])).stdout);
    const hook = JSON.parse((await runtime(['call', 'file_write', JSON.stringify({ path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' }), '--json'])).stdout);
    for (const result of [config, hook]) expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_PROTECTED' } });
    expect(existsSync(join(project, 'data', '.git'))).toBe(false);
  });
});

describe('secrets from files', () => {
  it('takes the bearer token from FORGE_AUTH_TOKEN_FILE', async () => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'token-from-a-file\n', { mode: 0o600 });
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: file } });
    try {
      const call = (token: string) => fetch(`${agent.url}/tools/where`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
      expect((await call('token-from-a-file')).status).toBe(200);
      expect((await call('wrong')).status).toBe(401);
      expect(agent.output()).not.toContain('auth token (saved in');
    } finally {
      await agent.stop('SIGKILL');
    }
  });

  it('refuses to start when FORGE_AUTH_TOKEN_FILE cannot be read', async () => {
    const { code, stderr } = await runtime(['serve', '--port', '0'], { env: { FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: '/nonexistent/token' } });
    expect(code).not.toBe(0);
    expect(stderr).toContain('error: FORGE_SERVE_CONFIG FORGE_AUTH_TOKEN_FILE names /nonexistent/token, which cannot be read: there is no such file\nhint: mount the token file there');
  });

  it('keeps a generated token in FORGE_STATE_DIR, and refuses to start when that names no directory it can use, rather than keeping the token elsewhere', async () => {
    const stateDir = join(tempDir(), 'state', 'forge');
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: stateDir } });
    await agent.stop('SIGKILL');
    expect(agent.output()).toContain(`auth token (saved in ${stateDir}/token-`);
    const aFile = join(tempDir(), 'a-file');
    writeFileSync(aFile, 'not a directory');
    for (const [named, why] of [
      [aFile, 'which cannot be made a directory: it, or a part of its path, is a file'],
      [join(aFile, 'below'), 'which cannot be made a directory: it, or a part of its path, is a file'],
      ['relative/state', 'which is not an absolute path'],
      [join(project, 'data', 'state'), "which is inside the work dir, where the agent's tools read"],
    ]) {
      const { code, stderr } = await runtime(['serve', '--port', '0'], { env: { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: named } });
      expect(code, stderr).not.toBe(0);
      expect(stderr).toContain(`error: FORGE_SERVE_CONFIG FORGE_STATE_DIR names ${named}, ${why}\nhint: point FORGE_STATE_DIR at a directory outside the work dir`);
      const doctor = await runtime(['doctor'], { env: { FORGE_AUTH_TOKEN: '', FORGE_STATE_DIR: named } });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout + doctor.stderr).toContain(`FORGE_STATE_DIR names ${named}, ${why}; the agent refuses to start`);
    }
  });

  it('refuses to start when OPENAI_API_KEY_FILE cannot be read, with FORGE_MODEL_KEY naming the variable and the path', async () => {
    const missing = join(tempDir(), 'no-such-key');
    const { code, stderr } = await runtime(['serve', '--port', '0'], { env: { OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: missing } });
    expect(code).toBe(1);
    expect(stderr).toContain(`error: FORGE_MODEL_KEY OPENAI_API_KEY_FILE names ${missing}, which cannot be read: there is no such file\nhint: put the value there (a mounted secret), or unset OPENAI_API_KEY_FILE and set OPENAI_API_KEY\n`);
    expect(stderr).not.toContain('ENOENT');
  });

  it('sends the model key read from OPENAI_API_KEY_FILE', async () => {
    const seen: string[] = [];
    const llm = createServer((req: IncomingMessage, res) => {
      seen.push(req.headers.authorization ?? '');
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }] })));
    });
    await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));
    const keyFile = join(tempDir(), 'key');
    writeFileSync(keyFile, 'sk-from-a-file\n', { mode: 0o600 });
    const dir = tempDir();
    mkdirSync(join(dir, '.forge-output'));
    for (const f of ['runtime.mjs', 'forge-runtime.cjs', 'agent.json']) writeFileSync(join(dir, '.forge-output', f), readFileSync(join(bundle, f)));
    cpSync(join(bundle, 'vendor'), join(dir, '.forge-output', 'vendor'), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(bundle, 'agent.json'), 'utf8'));
    manifest.model.base_url = `http://127.0.0.1:${(llm.address() as { port: number }).port}/v1`;
    manifest.egress.allowed_addresses = [`127.0.0.1:${(llm.address() as { port: number }).port}`];
    manifest.workdir = '.';
    writeFileSync(join(dir, '.forge-output', 'agent.json'), JSON.stringify(manifest));
    const agent = await startAgentProcess(process.execPath, [join(dir, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: dir, env: { FORGE_AUTH_TOKEN: 't', OPENAI_API_KEY: '', OPENAI_API_KEY_FILE: keyFile, FORGE_VERIFY: 'off' } });
    try {
      const res = await fetch(`${agent.url}/a2a`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } } }),
      });
      expect(JSON.stringify(await res.json())).toContain('hello');
      expect(seen).toEqual(['Bearer sk-from-a-file']);
    } finally {
      await agent.stop('SIGKILL');
      llm.close();
    }
  });
});

describe('--stdio', () => {
  it('answers every call in flight when the client closes stdin', async () => {
    const child = spawn(process.execPath, [join(bundle, 'runtime.mjs'), '--stdio'], { cwd: project, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const send = (message: unknown) => child.stdin.write(JSON.stringify(message) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { seconds: 1, tag: 'a' } } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: { seconds: 0.5, tag: 'b' } } });
    child.stdin.end();
    expect(await exited).toBe(0);
    const answers = out.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const byId = Object.fromEntries(answers.map((a) => [a.id, a]));
    expect(JSON.stringify(byId[2]?.result)).toContain('done a');
    expect(JSON.stringify(byId[3]?.result)).toContain('done b');
  }, 60_000);
});

