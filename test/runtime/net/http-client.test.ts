import { execFileSync } from 'node:child_process';
import { createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EgressRefusedError, type EgressPolicy } from '../../../runtime/net/egress-policy.ts';
import { createAnthropicProvider } from '../../../runtime/agent/providers/anthropic.ts';
import { HttpClient, HttpError } from '../../../runtime/net/http-client.ts';
import { startServer } from '../../helpers/http-server.ts';
import { tempDir } from '../../helpers/project.ts';

const client = new HttpClient();

describe('HttpClient', () => {
  it('sends the method, headers and body, and returns status, headers and body', async () => {
    const server = await startServer((req, res) => {
      res.setHeader('x-echo', req.headers['x-test'] ?? '');
      res.end(`${req.method} ${req.body}`);
    });
    const response = await client.request({ url: `${server.url}/p?q=1`, method: 'put', headers: { 'X-Test': 'yes' }, body: 'payload' });
    expect(response).toMatchObject({ status: 200, headers: { 'x-echo': 'yes' }, truncated: false, redirects: [] });
    expect(response.body.toString()).toBe('PUT payload');
    expect(server.requests[0]).toMatchObject({ url: '/p?q=1', headers: { 'content-length': '7' } });
  });

  it("sends the URL's host as Host, never the caller's own (the egress policy judged the URL's)", async () => {
    const server = await startServer((req, res) => res.end(req.headers.host));
    for (const name of ['Host', 'host', 'HOST']) {
      const response = await client.request({ url: `${server.url}/`, headers: { [name]: 'evil.example' } });
      expect(response.body.toString()).toBe(new URL(server.url).host);
    }
  });

  it('speaks HTTPS (node:https is loaded at the first such request), checking the server certificate', async () => {
    const dir = tempDir();
    const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const https = await import('node:https');
    const server = https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => res.end(`secure ${req.method}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      // Not trusted yet: the certificate is refused, as any unknown one must be.
      await expect(client.request({ url })).rejects.toMatchObject({ code: 'FORGE_HTTP_NETWORK' });
      https.globalAgent.options.ca = readFileSync(certFile);
      const response = await client.request({ url, method: 'POST', body: 'x' });
      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe('secure POST');
      // A request on a connection of its own (checkConnectAddress) trusts the same certificates.
      const asked: string[] = [];
      expect((await client.request({ url, checkConnectAddress: (_url, address) => void asked.push(address) })).status).toBe(200);
      expect(asked).toEqual(['127.0.0.1']);
    } finally {
      delete https.globalAgent.options.ca;
      https.globalAgent.destroy();
      server.close();
    }
  });

  it('keeps credentials on a same-origin redirect and drops them on a cross-origin one', async () => {
    const other = await startServer((_req, res) => res.end('elsewhere'));
    const origin = await startServer((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/same' }).end();
      else if (req.url === '/same') res.writeHead(307, { location: `${other.url}/landing` }).end();
      else res.end();
    });
    const response = await client.request({ url: `${origin.url}/start`, headers: { Authorization: 'Bearer secret', Cookie: 'a=b', 'Proxy-Authorization': 'x', 'X-Keep': 'kept' } });
    expect(response.body.toString()).toBe('elsewhere');
    expect(response.redirects).toEqual([`${origin.url}/same`, `${other.url}/landing`]);
    expect(origin.requests[1].headers.authorization).toBe('Bearer secret');
    const landed = other.requests[0].headers;
    expect(landed.authorization).toBeUndefined();
    expect(landed.cookie).toBeUndefined();
    expect(landed['proxy-authorization']).toBeUndefined();
    expect(landed['x-keep']).toBe('kept');
  });

  it('drops API-key headers, credential-named ones and those the caller marks on a cross-origin redirect', async () => {
    const capture = await startServer((_req, res) => res.end('captured'));
    const origin = await startServer((req, res) => {
      if (req.url === '/same') return res.end('same');
      res.writeHead(307, { location: `${capture.url}/landing` }).end();
    });
    const headers = { 'X-Api-Key': 'sk-ant-k1', 'api-key': 'azure-k2', 'x-goog-api-key': 'goog-k3', 'X-Auth-Token': 't4', 'X-Vault-Token': 't5', 'X-Partner-Ident': 'k6', 'X-Keep': 'kept' };
    const same = await client.request({ url: `${origin.url}/same`, headers, credentialHeaders: ['X-Partner-Ident'] });
    expect(same.body.toString()).toBe('same');
    expect(origin.requests[0].headers).toMatchObject({ 'x-api-key': 'sk-ant-k1', 'x-partner-ident': 'k6' });
    await client.request({ url: `${origin.url}/start`, method: 'POST', body: '{}', headers, credentialHeaders: ['X-Partner-Ident'] });
    const landed = capture.requests[0];
    expect(landed.url).toBe('/landing');
    for (const name of ['x-api-key', 'api-key', 'x-goog-api-key', 'x-auth-token', 'x-vault-token', 'x-partner-ident']) expect(landed.headers[name], name).toBeUndefined();
    expect(landed.headers['x-keep']).toBe('kept');
    expect(JSON.stringify(capture.requests)).not.toMatch(/k1|k2|k3|t4|t5|k6/);
  });

  it("does not forward the Anthropic key when the model's base_url redirects to another origin", async () => {
    const capture = await startServer((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"nope"}}'));
    const gateway = await startServer((_req, res) => res.writeHead(307, { location: `${capture.url}/v1/messages` }).end());
    const provider = createAnthropicProvider({ model: 'claude', baseUrl: gateway.url, apiKey: 'sk-ant-redirected-key', http: client });
    await expect(provider.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toThrow(/HTTP 500/);
    expect(gateway.requests[0].headers['x-api-key']).toBe('sk-ant-redirected-key');
    expect(capture.requests).toHaveLength(1);
    expect(capture.requests[0].headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(capture.requests)).not.toContain('sk-ant-redirected-key');
  });

  it('turns a POST into a GET on 303, and keeps it on 307', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/see-other') res.writeHead(303, { location: '/after' }).end();
      else if (req.url === '/temporary') res.writeHead(307, { location: '/after' }).end();
      else res.end(`${req.method}:${req.body}`);
    });
    expect((await client.request({ url: `${server.url}/see-other`, method: 'POST', body: 'x' })).body.toString()).toBe('GET:');
    expect((await client.request({ url: `${server.url}/temporary`, method: 'POST', body: 'x' })).body.toString()).toBe('POST:x');
  });

  it('stops after the redirect limit', async () => {
    const server = await startServer((req, res) => res.writeHead(302, { location: `/r${Number(req.url!.slice(2) || 0) + 1}` }).end());
    await expect(client.request({ url: `${server.url}/r0`, maxRedirects: 3 })).rejects.toMatchObject({ code: 'FORGE_HTTP_REDIRECTS' });
    expect(server.requests).toHaveLength(4);
  });

  it('caps the body and says it was truncated', async () => {
    const server = await startServer((_req, res) => res.end('x'.repeat(5000)));
    const response = await client.request({ url: server.url, maxResponseBytes: 1000 });
    expect(response.body.length).toBe(1000);
    expect(response.truncated).toBe(true);
  });

  it('decodes a gzip body', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('compressed text')));
    expect((await client.request({ url: server.url })).body.toString()).toBe('compressed text');
  });

  it('times out a server that never answers', async () => {
    const server = await startServer(() => new Promise(() => {}));
    const started = Date.now();
    const error = await client.request({ url: server.url, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: 'FORGE_HTTP_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out a body that stops arriving, and says so', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('the first part, then nothing');
    });
    const error = await client.request({ url: server.url, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: 'FORGE_HTTP_TIMEOUT' });
  });

  it('ends a stream being read with the reason it was cancelled', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const controller = new AbortController();
    const stream = await client.stream({ url: server.url, signal: controller.signal });
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream.body) {
        chunks.push(chunk.toString());
        controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'FORGE_HTTP_ABORTED' });
    expect(chunks).toEqual(['data: one\n\n']);
  });

  it('refuses URLs that are not http or https', async () => {
    await expect(client.request({ url: 'file:///etc/passwd' })).rejects.toMatchObject({ code: 'FORGE_HTTP_URL' });
  });

  it('asks the egress policy about each hop and each resolved address', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const seen: string[] = [];
    const refuseLoopback: EgressPolicy = {
      checkUrl: (url) => (seen.push(`url ${url.hostname}`), undefined),
      checkAddress: (host, address) => (seen.push(`address ${host} ${address}`), address === '127.0.0.1' ? { host, rule: 'loopback is private' } : undefined),
    };
    const error = await new HttpClient(refuseLoopback).request({ url: `http://localhost:${server.port}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as Error).message).toBe('egress to localhost refused: loopback is private');
    expect(seen[0]).toBe('url localhost');
    expect(server.requests).toHaveLength(0);
  });

  it('checks a redirect target before following it', async () => {
    const target = await startServer((_req, res) => res.end('secret'));
    const start = await startServer((_req, res) => res.writeHead(302, { location: `http://localhost:${target.port}/` }).end());
    const policy: EgressPolicy = { checkUrl: (url) => (url.hostname === 'localhost' ? { host: 'localhost', rule: 'not allowed' } : undefined), checkAddress: () => undefined };
    await expect(new HttpClient(policy).request({ url: start.url })).rejects.toBeInstanceOf(EgressRefusedError);
    expect(target.requests).toHaveLength(0);
  });

  it("asks the caller's checkHop about the first URL and each redirect target, before connecting", async () => {
    const target = await startServer((_req, res) => res.end('secret'));
    const start = await startServer((_req, res) => res.writeHead(302, { location: `http://localhost:${target.port}/` }).end());
    const asked: string[] = [];
    const checkHop = (url: URL) => (asked.push(url.href), url.hostname === 'localhost' ? 'localhost is off the list' : undefined);
    const error = await client.request({ url: start.url, checkHop }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: 'FORGE_HTTP_REFUSED', message: `redirected to http://localhost:${target.port}/, refused: localhost is off the list` });
    expect(asked).toEqual([`${start.url}/`, `http://localhost:${target.port}/`]);
    expect(target.requests).toHaveLength(0);
    await expect(client.request({ url: `http://localhost:${target.port}/`, checkHop })).rejects.toMatchObject({ code: 'FORGE_HTTP_REFUSED', message: 'localhost is off the list' });
    expect(target.requests).toHaveLength(0);
  });

  it('streams a body as it arrives', async () => {
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await new Promise((r) => setTimeout(r, 20));
      res.end('data: two\n\n');
    });
    const stream = await client.stream({ url: server.url });
    let text = '';
    for await (const chunk of stream.body) text += chunk.toString();
    expect(stream.status).toBe(200);
    expect(text).toBe('data: one\n\ndata: two\n\n');
  });

  it('cancelling a stream nobody read leaves the client usable', async () => {
    // What the MCP SDK does with a 202 Accepted: it never reads the empty body, and closes later.
    const server = await startServer((_req, res) => res.writeHead(202).end());
    const controller = new AbortController();
    const stream = await client.stream({ url: server.url, signal: controller.signal });
    expect(stream.status).toBe(202);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await new Promise((r) => setTimeout(r, 50));
    expect((await client.request({ url: server.url })).status).toBe(202);
  });

  it.each([
    ['a Content-Length without its body', { 'Content-Length': '400' }],
    ['Transfer-Encoding', { 'Transfer-Encoding': 'chunked' }],
    ['Connection and Upgrade', { Connection: 'Upgrade', Upgrade: 'websocket' }],
    ['Expect', { Expect: '100-continue' }],
    ['Keep-Alive, TE and Trailer', { 'Keep-Alive': 'timeout=600', TE: 'trailers', Trailer: 'x-late' }],
  ])("frames the request itself, dropping a caller's %s: the connection stays in step for the next request", async (_what, framing) => {
    // A server that answers before reading the body, as many do for a GET: a length it was promised
    // makes it read the next request on the connection as that body.
    const seen: { url: string; headers: Record<string, unknown> }[] = [];
    const server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: { ...req.headers } });
      res.end(`answered ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pooled = new HttpClient();
    try {
      expect((await pooled.request({ url: `${url}/steered`, headers: framing })).body.toString()).toBe('answered /steered');
      expect((await pooled.request({ url: `${url}/next` })).body.toString()).toBe('answered /next');
      expect(seen.map((r) => r.url)).toEqual(['/steered', '/next']);
      for (const [name, value] of Object.entries(framing)) expect(seen[0].headers[name.toLowerCase()], name).not.toBe(value);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("keeps its own connections: a socket Node's global pool or another client kept alive is never reused past the policy", async () => {
    const server = await startServer((_req, res) => res.end('reached'));
    const url = `http://localhost:${server.port}/`;
    // Kept alive in Node's global pool (what the OTLP exporter and build steps use), and in an open client's.
    await new Promise<void>((resolve, reject) => httpGet(url, (res) => res.resume().on('end', resolve)).on('error', reject));
    expect((await new HttpClient().request({ url })).status).toBe(200);
    expect(server.requests).toHaveLength(2);
    const refuseLoopback: EgressPolicy = { checkUrl: () => undefined, checkAddress: (host, address) => (address === '127.0.0.1' || address === '::1' ? { host, rule: 'loopback is private' } : undefined) };
    const checked = new HttpClient(refuseLoopback);
    for (let i = 0; i < 3; i++) await expect(checked.request({ url })).rejects.toThrow('loopback is private');
    expect(server.requests).toHaveLength(2);
  });

  it('checks by a policy set later (hot reload), in this client and the ones made from it, and reuses no connection the old policy opened', async () => {
    const server = await startServer((_req, res) => res.end('reached'));
    const url = `http://localhost:${server.port}/`;
    const allowAll: EgressPolicy = { checkUrl: () => undefined, checkAddress: () => undefined };
    const refuseLoopback: EgressPolicy = { checkUrl: () => undefined, checkAddress: (host, address) => (address === '127.0.0.1' || address === '::1' ? { host, rule: 'loopback is private' } : undefined) };
    const tools = new HttpClient(allowAll);
    const model = tools.withOwnPool();
    // Both keep a connection alive, opened under the looser policy.
    expect((await tools.request({ url })).status).toBe(200);
    expect((await model.request({ url })).status).toBe(200);
    tools.setEgress(refuseLoopback);
    await expect(tools.request({ url })).rejects.toThrow('loopback is private');
    await expect(model.request({ url })).rejects.toThrow('loopback is private');
    expect(server.requests).toHaveLength(2);
  });

  it("asks checkConnectAddress about the address of every request's own connection: a kept-alive socket another request opened is not reused past it", async () => {
    const server = await startServer((_req, res) => res.end('reached'));
    const url = `http://localhost:${server.port}/`;
    const pooled = new HttpClient({ checkUrl: () => undefined, checkAddress: () => undefined });
    // A request without the caller's check (a tool's) leaves a socket to loopback alive in the client's pool.
    expect((await pooled.request({ url })).status).toBe(200);
    const asked: string[] = [];
    const refuseLoopback = (_url: URL, address: string) => (asked.push(address), 'loopback is not for this caller');
    await expect(pooled.request({ url, method: 'POST', body: 'token', checkConnectAddress: refuseLoopback })).rejects.toMatchObject({ code: 'FORGE_HTTP_REFUSED' });
    expect(asked.length).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(1);
  });

  it('reuses, for requests with one checkConnectAddress, the connection that check judged', async () => {
    const server = await startServer((req, res) => res.end(String(req.socket.remotePort)));
    const url = `http://localhost:${server.port}/`;
    const pooled = new HttpClient({ checkUrl: () => undefined, checkAddress: () => undefined });
    const asked: string[] = [];
    const check = (_url: URL, address: string) => void asked.push(address);
    const first = (await pooled.request({ url, checkConnectAddress: check })).body.toString();
    const askedOnce = asked.length;
    expect(askedOnce).toBeGreaterThan(0);
    expect((await pooled.request({ url, checkConnectAddress: check })).body.toString()).toBe(first);
    expect(asked).toHaveLength(askedOnce);
  });

  it('hands back a redirect unfollowed with redirect: manual', async () => {
    const server = await startServer((_req, res) => res.writeHead(301, { location: '/moved' }).end());
    const response = await client.request({ url: server.url, redirect: 'manual' });
    expect(response).toMatchObject({ status: 301, headers: { location: '/moved' }, redirects: [] });
  });
});
