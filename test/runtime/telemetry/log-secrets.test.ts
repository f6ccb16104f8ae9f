/**
 * The log is a sink for what others wrote — a tool's prints, a model
 * gateway's error body — and either may quote a secret the runtime holds.
 * Every log line is masked where it is written (log-text.ts, json-logger.ts),
 * in both formats, so the key never reaches the process's output.
 */
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { startServer } from '../../helpers/http-server.ts';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { deployBundle, forge, forgeBin, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';

const MODEL_KEY = 'fk-gateway-0123456789abcdef';
const SERVICE_TOKEN = 'svc-tok-4f1e2d3c5b6a7988';
const printsToken = '"""\nTool: show_token\nDescription: Prints its token.\nTags: read\n\nInput:\n  note (str): A note.\n"""\nimport os, sys\n\ndef execute(args):\n    print("using token " + os.environ["SERVICE_TOKEN"], file=sys.stderr)\n    return {"done": True}\n';

async function sendMessage(url: string, text: string): Promise<string> {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text }] } } }),
  });
  return response.text();
}

describe.each(['text', 'json'])('log lines in %s format', (format) => {
  it('mask a model key a gateway echoes in a long error body, a token a tool prints, and one in a long argument', async () => {
    // Not JSON and long, the key straddling the point where the body is cut (300 characters) for the message.
    const gateway = await startServer((_req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`${'denied '.repeat(39)}for Bearer ${MODEL_KEY}`));
    const config = minimalConfig(`env_passthrough: [SERVICE_TOKEN]\nmodel:\n  provider: openai\n  name: scripted\n  base_url: ${gateway.url}/v1\n  api_key_env: FAKE_KEY\n  fallbacks:\n    - { provider: openai, name: backup, base_url: ${gateway.url}/v1, api_key_env: FAKE_KEY }\n`);
    const project = writeProject({ 'forge.yaml': config, 'tools/show_token.py': printsToken });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth', '--log-format', format, '--verbose'], { cwd: project, env: { FAKE_KEY: MODEL_KEY, SERVICE_TOKEN } });
    try {
      const tool = await fetch(`${agent.url}/tools/show_token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: `${'x'.repeat(180)} ${SERVICE_TOKEN}` }) });
      expect(tool.status).toBe(200);
      await agent.waitFor('using token');
      const status = await sendMessage(agent.url, 'hello');
      // The fallback's warning quotes the first model's failure.
      await agent.waitFor('trying the next');
      expect(status).toContain('for Bearer [REDACTED]');
      expect(agent.output()).toContain('using token [REDACTED]');
      // The dev call log cuts arguments at 200 characters, through the token.
      expect(agent.output()).toMatch(/tool show_token \{\\?"note\\?":\\?"x+ \[REDACT/);
      for (const secret of [MODEL_KEY, SERVICE_TOKEN]) {
        expect(agent.output()).not.toContain(secret.slice(0, 10));
        expect(status).not.toContain(secret.slice(0, 10));
      }
    } finally {
      await agent.stop();
    }
  });
});

describe('a trace collector that cannot be reached', () => {
  it("is named in the log without the password or key its endpoint's URL carries", async () => {
    const password = 'collector-pass-0123456789';
    const key = 'collector-key-9876543210';
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/ping.py': '"""\nTool: ping\nDescription: Pings.\nTags: read\n"""\ndef execute(args):\n    return "pong"\n' });
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://forge:${password}@127.0.0.1:${closed}/v1/traces?api_key=${key}`, OTEL_BSP_SCHEDULE_DELAY: '50' };
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env });
    try {
      // A call makes spans to send.
      await fetch(`${agent.url}/tools/ping`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await agent.waitFor('traces could not be sent');
      expect(agent.output()).toContain(`http://forge:[REDACTED]@127.0.0.1:${closed}/v1/traces?api_key=[REDACTED]`);
      for (const secret of [password, key]) expect(agent.output()).not.toContain(secret);
    } finally {
      await agent.stop();
    }
  });
});

describe('what the server shows on purpose', () => {
  /** The agent token a JSON log line shows once, checked by using it. */
  async function shownToken(agent: { url: string; output(): string }): Promise<string> {
    const lines = agent.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string });
    const token = /shown once\): (\S+)/.exec(lines.map((l) => l.msg).join('\n'))?.[1];
    expect(token, agent.output()).toMatch(/^[\w-]{16,}$/);
    expect((await fetch(`${agent.url}/tools`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    return token!;
  }

  it('forge run --dev --log-format json shows the token it generated, and the studio link with it, unmasked', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--log-format', 'json'], { cwd: project, env: { FORGE_STATE_DIR: tempDir(), FORGE_AUTH_TOKEN: '' } });
    try {
      const token = await shownToken(agent);
      expect(agent.output()).toContain(`/studio#token=${token}`);
    } finally {
      await agent.stop();
    }
  });

  it('the bundle with --log-format json shows the token it generated, unmasked', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    expect((await forge(['build', '--prod'], project)).code).toBe(0);
    const { bundle, workDir } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--log-format', 'json'], { cwd: workDir, env: { FORGE_STATE_DIR: tempDir(), FORGE_AUTH_TOKEN: '' } });
    try {
      await shownToken(agent);
    } finally {
      await agent.stop();
    }
  });
});
