/**
 * The fetch the MCP SDK is given: WHATWG fetch semantics on top of the
 * HttpClient, so its requests pass the egress policy.
 */
import { describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { createPolicyFetch } from '../../../runtime/net/policy-fetch.ts';
import { startServer } from '../../helpers/http-server.ts';

const loopbackFetch = () => createPolicyFetch(new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1'] })));

describe('createPolicyFetch', () => {
  it('sends method, headers (a Headers object) and body, and answers with a Response', async () => {
    const server = await startServer((req, res) => res.writeHead(201, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ got: req.body, accept: req.headers.accept })));
    const response = await loopbackFetch()(new URL(`${server.url}/mcp`), { method: 'POST', headers: new Headers({ accept: 'application/json, text/event-stream' }), body: '{"jsonrpc":"2.0"}' });
    expect(response.status).toBe(201);
    expect(response.headers.get('mcp-session-id')).toBe('s1');
    expect(await response.json()).toEqual({ got: '{"jsonrpc":"2.0"}', accept: 'application/json, text/event-stream' });
  });

  it('streams an event stream as it arrives, past the request timeout', async () => {
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await new Promise((r) => setTimeout(r, 400));
      res.end('data: two\n\n');
    });
    const fetchWithShortTimeout = createPolicyFetch(new HttpClient(createEgressPolicy({ mode: 'open', allowed_domains: [], allowed_addresses: ['127.0.0.1'] })), { timeoutMs: 200 });
    const response = await fetchWithShortTimeout(server.url);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe('data: one\n\n');
    let rest = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += Buffer.from(next.value).toString();
    expect(rest).toBe('data: two\n\n');
  });

  it('hands back a redirect unfollowed when asked to (redirect: manual)', async () => {
    const server = await startServer((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    const response = await loopbackFetch()(server.url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/elsewhere');
    expect(server.requests).toHaveLength(1);
  });

  it('gives a bodiless status a null body', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const response = await loopbackFetch()(server.url, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('rejects what the egress policy refuses', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const refusing = createPolicyFetch(new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [] })));
    await expect(refusing(server.url)).rejects.toThrow('egress to 127.0.0.1 refused: 127.0.0.1 is a loopback address');
    expect(server.requests).toHaveLength(0);
  });

  it('cancelling an open event stream ends the reader with the signal\'s reason', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: open\n\n');
    });
    const controller = new AbortController();
    const response = await loopbackFetch()(server.url, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toBe(controller.signal.reason);
    expect(server.requests).toHaveLength(1);
  });
});
