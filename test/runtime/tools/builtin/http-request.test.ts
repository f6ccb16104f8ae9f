import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { startServer, type TestServer } from '../../../helpers/http-server.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let origin: TestServer;
let other: TestServer;
let t: ToolHarness;

beforeAll(async () => {
  other = await startServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null, custom: req.headers['x-custom'] ?? null }));
  });
  origin = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/echo':
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-answer', '42');
        res.end(JSON.stringify({ method: req.method, body: req.body, contentType: req.headers['content-type'] ?? null, custom: req.headers['x-custom'] ?? null }));
        return;
      case '/same-origin-redirect':
        res.writeHead(302, { location: '/echo-auth' }).end();
        return;
      case '/echo-auth':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ authorization: req.headers.authorization ?? null }));
        return;
      case '/cross-origin-redirect':
        res.writeHead(307, { location: `${other.url}/landed` }).end();
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' }).end();
        return;
      case '/big':
        res.setHeader('content-type', 'text/plain');
        res.end('x'.repeat(3000));
        return;
      case '/gzip':
        res.setHeader('content-type', 'text/plain');
        res.setHeader('content-encoding', 'gzip');
        res.end(gzipSync('decoded text'));
        return;
      case '/latin1':
        res.setHeader('content-type', 'text/plain; charset=iso-8859-1');
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        return;
      case '/binary':
        res.setHeader('content-type', 'image/png');
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
        return;
      case '/missing':
        res.statusCode = 404;
        res.end('not here');
        return;
      case '/slow':
        await new Promise((resolve) => setTimeout(resolve, 3000));
        res.end('late');
        return;
      default:
        res.statusCode = 500;
        res.end();
    }
  });
  t = await tools(['http_request'], { workDir: tempDir(), config: { http_request: { max_response_bytes: 1024 } } });
});

interface HttpValue {
  status: number;
  headers: Record<string, string>;
  body: string;
  body_encoding: string;
  truncated: boolean;
  url: string;
  redirects: string[];
  bytes: number;
}

describe('http_request', () => {
  it.each(['GET', 'DELETE', 'PUT', 'PATCH'])('sends %s with headers and returns status, headers and body', async (method) => {
    const value = await t.value<HttpValue>('http_request', { url: `${origin.url}/echo`, method, headers: { 'X-Custom': 'yes' } });
    expect(value.status).toBe(200);
    expect(value.headers['x-answer']).toBe('42');
    expect(JSON.parse(value.body)).toMatchObject({ method, custom: 'yes' });
  });

  it('sends a string body as is and an object body as JSON', async () => {
    const text = await t.value<HttpValue>('http_request', { url: `${origin.url}/echo`, method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(JSON.parse(text.body)).toMatchObject({ body: 'a=1', contentType: 'application/x-www-form-urlencoded' });
    const json = await t.value<HttpValue>('http_request', { url: `${origin.url}/echo`, method: 'POST', body: { a: [1, 2] } });
    expect(JSON.parse(json.body)).toMatchObject({ body: '{"a":[1,2]}', contentType: 'application/json' });
  });

  it('returns HEAD responses without a body', async () => {
    const value = await t.value<HttpValue>('http_request', { url: `${origin.url}/echo`, method: 'HEAD' });
    expect(value).toMatchObject({ status: 200, body: '' });
  });

  it('keeps credentials on a same-origin redirect', async () => {
    const value = await t.value<HttpValue>('http_request', { url: `${origin.url}/same-origin-redirect`, headers: { Authorization: 'Bearer s3cret' } });
    expect(JSON.parse(value.body).authorization).toBe('Bearer s3cret');
    expect(value.redirects).toEqual([`${origin.url}/echo-auth`]);
  });

  it('drops Authorization and Cookie on a cross-origin redirect, keeping other headers', async () => {
    const value = await t.value<HttpValue>('http_request', { url: `${origin.url}/cross-origin-redirect`, headers: { Authorization: 'Bearer s3cret', Cookie: 'session=1', 'X-Custom': 'kept' } });
    expect(value.url).toBe(`${other.url}/landed`);
    expect(JSON.parse(value.body)).toEqual({ authorization: null, cookie: null, custom: 'kept' });
  });

  it('stops after 10 redirects', async () => {
    expect(await t.call('http_request', { url: `${origin.url}/loop` })).toMatchObject({ ok: false, error: { code: 'FORGE_HTTP_REDIRECTS' } });
  });

  it('cuts the body at the configured cap and says so', async () => {
    const value = await t.value<HttpValue>('http_request', { url: `${origin.url}/big` });
    expect(value).toMatchObject({ truncated: true, bytes: 1024 });
    expect(value.body).toBe('x'.repeat(1024));
  });

  it('decodes gzip, and returns binary bodies as base64', async () => {
    expect((await t.value<HttpValue>('http_request', { url: `${origin.url}/gzip` })).body).toBe('decoded text');
    const binary = await t.value<HttpValue>('http_request', { url: `${origin.url}/binary` });
    expect(binary).toMatchObject({ body_encoding: 'base64', body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]).toString('base64') });
  });

  it('decodes a text body in the charset its content type names', async () => {
    expect(await t.value<HttpValue>('http_request', { url: `${origin.url}/latin1` })).toMatchObject({ body: 'café', body_encoding: 'utf8' });
  });

  it('returns an HTTP error status as a normal result', async () => {
    expect(await t.value<HttpValue>('http_request', { url: `${origin.url}/missing` })).toMatchObject({ status: 404, body: 'not here' });
  });

  it('fails with a clear error when the timeout passes', async () => {
    const started = Date.now();
    const result = await t.call('http_request', { url: `${origin.url}/slow`, timeout: 0.3 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_HTTP_TIMEOUT' } });
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it.each([
    [{ url: 'not a url' }, 'FORGE_HTTP_URL'],
    [{ url: 'file:///etc/passwd' }, 'FORGE_HTTP_URL'],
    [{ url: 'http://127.0.0.1:1/' }, 'FORGE_HTTP_NETWORK'],
    [{ url: 'http://x', method: 'TRACE' }, 'FORGE_TOOL_ARGS'],
    [{ url: 'http://x', timeout: 301 }, 'FORGE_TOOL_ARGS'],
  ])('refuses %j with %s', async (args, code) => {
    expect(await t.call('http_request', args)).toMatchObject({ ok: false, error: { code } });
  });
});
