import { describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import webhookCall from '../../../../runtime/tools/builtin/webhook-call.ts';
import { instantiateBuiltin } from '../../../../runtime/tools/builtin/define.ts';
import { toSpec } from '../../../../runtime/tools/model.ts';
import { compileSchema } from '../../../../runtime/tools/validation.ts';
import { silentLogger, ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { startServer } from '../../../helpers/http-server.ts';
import { tempDir } from '../../../helpers/project.ts';

const loopbackOnly = () => new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }));

/** webhook_call as the build makes it: config validated (defaults filled), spec adapted to the config. */
function webhookRegistry(config: Record<string, unknown>, options: { http?: HttpClient; env?: NodeJS.ProcessEnv } = {}) {
  const filled = structuredClone(config);
  expect(compileSchema(webhookCall.configSchema!)(filled)).toBe(true);
  const spec = toSpec({ ...webhookCall.spec, ...webhookCall.specFor?.(filled), config: filled });
  const registry = new ToolRegistry({ workDir: tempDir() });
  registry.register(instantiateBuiltin(webhookCall, spec, { workDir: tempDir(), log: silentLogger, http: options.http ?? loopbackOnly(), env: options.env ?? {} }), 'test');
  return { registry, spec };
}

describe('webhook_call', () => {
  it('POSTs the payload as JSON to a URL and returns status and body', async () => {
    const hook = await startServer((req, res) => res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ received: JSON.parse(req.body) })));
    const { registry } = webhookRegistry({});
    const result = await registry.execute('webhook_call', { url: `${hook.url}/hooks/build`, payload: { ref: 'main', run: 7 }, headers: { 'X-Event': 'push' } });
    expect(result).toEqual({ ok: true, value: { status: 202, body: { received: { ref: 'main', run: 7 } } }, durationMs: expect.any(Number) });
    expect(hook.requests[0]).toMatchObject({ method: 'POST', url: '/hooks/build', headers: { 'content-type': 'application/json', 'x-event': 'push' } });
  });

  it('with pinned webhooks, takes a name (an enum in its schema) and never a URL', async () => {
    const hook = await startServer((_req, res) => res.end('ok'));
    const { registry, spec } = webhookRegistry({ webhooks: { deploy: `${hook.url}/deploy`, alert: { url: `${hook.url}/alert`, headers: { 'X-Token': '${ALERT_TOKEN}' } } } }, { env: { ALERT_TOKEN: 't0ken' } });
    expect(spec.inputSchema).toMatchObject({ properties: { webhook: { enum: ['alert', 'deploy'] } }, required: ['webhook', 'payload'] });
    expect(spec.description).toContain('alert, deploy');

    expect(await registry.execute('webhook_call', { webhook: 'alert', payload: { level: 'high' } })).toMatchObject({ ok: true, value: { status: 200, body: 'ok' } });
    expect(hook.requests[0]).toMatchObject({ url: '/alert', headers: { 'x-token': 't0ken' }, body: '{"level":"high"}' });

    const byUrl = await registry.execute('webhook_call', { url: 'https://attacker.example/', payload: {} });
    expect(byUrl).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('unknown argument "url"') } });
    const unknown = await registry.execute('webhook_call', { webhook: 'nope', payload: {} });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS' } });
    expect(hook.requests).toHaveLength(1);
  });

  it('fails clearly when a pinned header\'s variable is not set', async () => {
    const { registry } = webhookRegistry({ webhooks: { alert: { url: 'http://127.0.0.1:9/alert', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' } } } });
    expect(await registry.execute('webhook_call', { webhook: 'alert', payload: 1 })).toMatchObject({
      ok: false,
      error: { code: 'FORGE_WEBHOOK_ENV', message: 'webhook "alert": environment variable HOOK_TOKEN is not set (used in webhooks.alert.headers.Authorization)' },
    });
  });

  it("reads the ${VAR}s of a pinned webhook's URL when it is called, and never a URL the model gives", async () => {
    const hook = await startServer((_req, res) => res.end('ok'));
    const port = new URL(hook.url).port;
    const { registry } = webhookRegistry({ webhooks: { ci: 'http://127.0.0.1:${HOOK_PORT}/hooks/${HOOK_PATH}' } }, { env: { HOOK_PORT: port, HOOK_PATH: 'build' } });
    expect(await registry.execute('webhook_call', { webhook: 'ci', payload: 1 })).toMatchObject({ ok: true, value: { status: 200 } });
    expect(hook.requests[0]).toMatchObject({ url: '/hooks/build' });
    const unset = webhookRegistry({ webhooks: { ci: 'http://127.0.0.1:9/hooks/${HOOK_PATH}' } });
    expect(await unset.registry.execute('webhook_call', { webhook: 'ci', payload: 1 })).toMatchObject({ ok: false, error: { code: 'FORGE_WEBHOOK_ENV', message: 'webhook "ci": environment variable HOOK_PATH is not set (used in webhooks.ci.url)' } });
    // Unpinned, the model's URL is never expanded: one with ${VAR} is refused as a URL, and reads nothing from the agent's environment.
    const open = webhookRegistry({}, { env: { SECRET_PATH: 'leaked' } });
    const byModel = await open.registry.execute('webhook_call', { url: `${hook.url}/x/\${SECRET_PATH}`, payload: 1 });
    expect(byModel).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS' } });
    expect(JSON.stringify(byModel)).not.toContain('leaked');
    expect(hook.requests).toHaveLength(1);
  });

  it("masks the secret a pinned webhook's URL holds (a Slack-style path) when the endpoint quotes it back", async () => {
    const hook = await startServer((req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end(`no hook at ${req.url}`));
    const secretPath = 'T0001/B0002/hookSecret0123456789';
    const { registry } = webhookRegistry({ webhooks: { alert: `${hook.url}/services/\${ALERT_HOOK_PATH}` } }, { env: { ALERT_HOOK_PATH: secretPath } });
    const result = await registry.execute('webhook_call', { webhook: 'alert', payload: 1 });
    expect(hook.requests[0].url).toBe(`/services/${secretPath}`);
    expect(result).toMatchObject({ ok: false, error: { message: expect.stringContaining('no hook at /services/[REDACTED]') } });
    expect(JSON.stringify(result)).not.toContain(secretPath);
  });

  it('turns an error status into a tool error with the body', async () => {
    const hook = await startServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('queue is full'));
    const { registry } = webhookRegistry({});
    expect(await registry.execute('webhook_call', { url: hook.url, payload: {} })).toMatchObject({ ok: false, error: { code: 'FORGE_WEBHOOK_STATUS', message: expect.stringContaining('answered 500 Internal Server Error: queue is full') } });
  });

  it('caps the response and says so', async () => {
    const hook = await startServer((_req, res) => res.end('y'.repeat(5000)));
    const { registry } = webhookRegistry({ max_response_bytes: 100 });
    const result = await registry.execute('webhook_call', { url: hook.url, payload: {} });
    expect(result).toMatchObject({ ok: true, value: { status: 200, body: 'y'.repeat(100), truncated: true } });
  });

  it('is refused by the egress policy with the host and the rule', async () => {
    const hook = await startServer((_req, res) => res.end('should not be reached'));
    const { registry } = webhookRegistry({}, { http: new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['hooks.example.com'] })) });
    const result = await registry.execute('webhook_call', { url: `http://localhost:${hook.port}/`, payload: {} });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED', message: `webhook_call to localhost:${hook.port}: egress to localhost refused: localhost is not in egress.allowed_domains`, hint: 'add "localhost" to egress.allowed_domains in forge.yaml' } });
    expect(hook.requests).toHaveLength(0);
  });

  it('times out a webhook that never answers', async () => {
    const hook = await startServer(() => new Promise(() => {}));
    const { registry } = webhookRegistry({});
    const result = await registry.execute('webhook_call', { url: hook.url, payload: {}, timeout_ms: 200 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_HTTP_TIMEOUT', message: expect.stringMatching(/^webhook_call to 127\.0\.0\.1:\d+: request timed out after 200 ms$/), hint: 'raise the timeout, or try again later' } });
  });

  // A port past 65535 passes the schema's "uri" format; naming the host in the message once threw instead.
  it('reports a URL no client can use as a URL error', async () => {
    const { registry } = webhookRegistry({});
    const result = await registry.execute('webhook_call', { url: 'http://127.0.0.1:99999/', payload: {} });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_HTTP_URL', message: expect.stringContaining('webhook_call to http://127.0.0.1:99999/'), hint: 'give an absolute http:// or https:// URL' } });
  });

  it('decodes a text response in the charset it names', async () => {
    const hook = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' }).end(Buffer.from('queued: café', 'latin1')));
    const { registry } = webhookRegistry({});
    expect(await registry.execute('webhook_call', { url: hook.url, payload: {} })).toMatchObject({ ok: true, value: { status: 200, body: 'queued: café' } });
  });

  it('marks a binary response with its type and size instead of decoding it', async () => {
    const hook = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(64, 0xff)));
    const { registry } = webhookRegistry({});
    expect(await registry.execute('webhook_call', { url: hook.url, payload: {} })).toMatchObject({ ok: true, value: { status: 200, body: '[binary body: image/png, 64 bytes]' } });
  });
});
