/**
 * The Swagger Petstore (OpenAPI 3.0 and Swagger 2.0 fixtures) as tools,
 * called against a small Petstore on loopback that implements a few of its
 * operations: path, query, header, JSON and form bodies, auth, errors.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { createOpenApiTool } from '../../../../runtime/tools/adapters/openapi/openapi-tool.ts';
import { buildApiRequest } from '../../../../runtime/tools/adapters/openapi/request.ts';
import type { ApiSettings, OpenApiBinding } from '../../../../runtime/tools/adapters/settings.ts';
import { ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { loadOpenApiDocument } from '../../../../stages/adapters/openapi-document.ts';
import { listOperations } from '../../../../stages/adapters/openapi-operations.ts';
import { operationToolSpec } from '../../../../stages/adapters/openapi-tool-spec.ts';
import { startServer } from '../../../helpers/http-server.ts';
import { fixturesDir, tempDir } from '../../../helpers/project.ts';
import { PETSTORE_API_KEY, startPetstore } from '../../../helpers/petstore-server.ts';

const loopbackOnly = () => new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }));

async function petstoreRegistry(fixture: string, api: Omit<ApiSettings, 'name' | 'spec' | 'timeout_ms'>, options: { env?: NodeJS.ProcessEnv; http?: HttpClient } = {}) {
  const { doc } = await loadOpenApiDocument(join(fixturesDir, 'openapi', fixture));
  const settings: ApiSettings = { name: 'petstore', spec: fixture, timeout_ms: 10_000, ...api };
  const registry = new ToolRegistry({ workDir: tempDir() });
  for (const op of listOperations(doc)) {
    if (op.unsupported) continue;
    const spec = operationToolSpec('petstore', op, settings.timeout_ms);
    registry.register(createOpenApiTool(spec, settings, { http: options.http ?? loopbackOnly(), env: options.env ?? {} }), fixture);
  }
  return registry;
}

describe.each(['petstore-openapi3.json', 'petstore-swagger2.json'])('Petstore operations from %s', (fixture) => {
  let petstore: Awaited<ReturnType<typeof startPetstore>>;
  let registry: ToolRegistry;
  beforeAll(async () => {
    petstore = await startPetstore();
    registry = await petstoreRegistry(fixture, { base_url: petstore.baseUrl, auth: { type: 'bearer', token_env: 'PETSTORE_TOKEN' } }, { env: { PETSTORE_TOKEN: 'inventory-token' } });
  });

  it('adds a pet: the JSON body from top-level arguments', async () => {
    const result = await registry.execute('petstore__addPet', { name: 'rex', photoUrls: ['https://pics/rex.png'], status: 'pending', category: { id: 2, name: 'dogs' } });
    expect(result).toMatchObject({ ok: true, value: { status: 200, body: { name: 'rex', status: 'pending', id: expect.any(Number) }, headers: { 'content-type': 'application/json' } } });
    const sent = petstore.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', url: '/v2/pet', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(sent.body)).toEqual({ name: 'rex', photoUrls: ['https://pics/rex.png'], status: 'pending', category: { id: 2, name: 'dogs' } });
  });

  it('gets a pet by id: the path parameter', async () => {
    const result = await registry.execute('petstore__getPetById', { petId: 1 });
    expect(result).toMatchObject({ ok: true, value: { status: 200, body: { id: 1, name: 'doggie' } } });
    expect(petstore.requests.at(-1)!.url).toBe('/v2/pet/1');
  });

  it('finds pets by status: an array query parameter, repeated', async () => {
    const result = await registry.execute('petstore__findPetsByStatus', { status: ['available', 'sold'] });
    expect(result).toMatchObject({ ok: true, value: { body: [{ id: 1, name: 'doggie' }] } });
    expect(petstore.requests.at(-1)!.url).toBe('/v2/pet/findByStatus?status=available&status=sold');
  });

  it('updates a pet with a form: a urlencoded body', async () => {
    const result = await registry.execute('petstore__updatePetWithForm', { petId: 1, name: 'doggo', status: 'sold' });
    expect(result).toMatchObject({ ok: true, value: { status: 200 } });
    expect(petstore.requests.at(-1)!.body).toBe('name=doggo&status=sold');
    expect(petstore.pets.get(1)).toMatchObject({ name: 'doggo', status: 'sold' });
  });

  it('deletes a pet: a header parameter', async () => {
    const added = await registry.execute('petstore__addPet', { name: 'temp', photoUrls: [] });
    const id = (added as { value: { body: { id: number } } }).value.body.id;
    expect(await registry.execute('petstore__deletePet', { petId: id, api_key: PETSTORE_API_KEY })).toMatchObject({ ok: true, value: { status: 200 } });
    expect(petstore.pets.has(id)).toBe(false);
  });

  it('sends the bearer token from the environment', async () => {
    expect(await registry.execute('petstore__getInventory', {})).toMatchObject({ ok: true, value: { body: expect.any(Object) } });
    expect(petstore.requests.at(-1)!.headers.authorization).toBe('Bearer inventory-token');
  });

  it('returns a text body and the response headers', async () => {
    const result = await registry.execute('petstore__loginUser', { username: 'ada', password: 'secret' });
    expect(result).toMatchObject({ ok: true, value: { status: 200, body: 'logged in user session: ada', headers: { 'x-rate-limit': '5000' } } });
  });

  it('turns a 404 into a tool error that carries the API\'s message', async () => {
    const result = await registry.execute('petstore__getPetById', { petId: 999 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_API_STATUS', message: 'petstore__getPetById: GET /v2/pet/999 answered 404 Not Found: {"code":1,"type":"error","message":"Pet not found"}' } });
  });

  it('checks arguments before sending anything', async () => {
    const before = petstore.requests.length;
    const result = await registry.execute('petstore__getPetById', { petId: 'one' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('"petId" must be an integer') } });
    expect(petstore.requests).toHaveLength(before);
  });
});

describe('OpenAPI tools and the rules around them', () => {
  it('refuses a base URL the egress policy does not allow, naming the host and the rule', async () => {
    const petstore = await startPetstore();
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: petstore.baseUrl }, { http: new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['petstore.swagger.io'] })) });
    const result = await registry.execute('petstore__getPetById', { petId: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED', message: expect.stringContaining('egress to 127.0.0.1 refused: 127.0.0.1 is a loopback address'), hint: expect.stringContaining('allowed_addresses') } });
    expect(petstore.requests).toHaveLength(0);
  });

  it('fails clearly when the auth variable is not set, without sending', async () => {
    const petstore = await startPetstore();
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: petstore.baseUrl, auth: { type: 'api_key', in: 'header', name: 'api_key', value_env: 'PETSTORE_KEY' } });
    const result = await registry.execute('petstore__getPetById', { petId: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_API_AUTH', message: 'petstore__getPetById: environment variable PETSTORE_KEY is not set (auth of API "petstore")' } });
    expect(petstore.requests).toHaveLength(0);
  });

  it('keeps an API key header of any name to its origin: a redirect elsewhere arrives without it', async () => {
    const capture = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1}'));
    const redirecting = await startServer((_req, res) => res.writeHead(307, { location: `${capture.url}/moved/pet/1` }).end());
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: `${redirecting.url}/v2`, auth: { type: 'api_key', in: 'header', name: 'X-Partner-Ident', value_env: 'PARTNER' } }, { env: { PARTNER: 'partner-key-123' } });
    expect(await registry.execute('petstore__getPetById', { petId: 1 })).toMatchObject({ ok: true, value: { status: 200 } });
    expect(redirecting.requests[0].headers['x-partner-ident']).toBe('partner-key-123');
    expect(capture.requests[0].url).toBe('/moved/pet/1');
    expect(JSON.stringify(capture.requests)).not.toContain('partner-key-123');
  });

  it('masks the credential in the error of an API that echoes the request headers back in its 401 body', async () => {
    // A hostile (or careless) API: whatever it is sent, it quotes back, in the message and in a long body.
    const echo = await startServer((req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized', received: req.headers, padding: 'x'.repeat(600) })));
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: `${echo.url}/v2`, auth: { type: 'bearer', token_env: 'ECHO_TOKEN' } }, { env: { ECHO_TOKEN: 'echoed-bearer-0123456789' } });
    const result = await registry.execute('petstore__getPetById', { petId: 1 });
    expect(echo.requests[0].headers.authorization).toBe('Bearer echoed-bearer-0123456789');
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_API_STATUS', message: expect.stringContaining('Bearer [REDACTED]') } });
    expect(JSON.stringify(result)).not.toContain('echoed-bearer-0123456789');
  });

  it('masks a credential its 401 body quotes where the error message cuts the body (1000 characters)', async () => {
    const token = 'cut-bearer-0123456789abcdef';
    const echo = await startServer((_req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`${'x'.repeat(990)} ${token} and more`));
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: `${echo.url}/v2`, auth: { type: 'bearer', token_env: 'CUT_TOKEN' } }, { env: { CUT_TOKEN: token } });
    const result = await registry.execute('petstore__getPetById', { petId: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_API_STATUS', message: expect.stringContaining(' [REDACT') } });
    expect(JSON.stringify(result)).not.toContain(token.slice(0, 8));
  });

  it('sends an API key in the query when configured so', async () => {
    const petstore = await startPetstore();
    const registry = await petstoreRegistry('petstore-openapi3.json', { base_url: petstore.baseUrl, auth: { type: 'api_key', in: 'query', name: 'key', value_env: 'K' } }, { env: { K: 'k1' } });
    await registry.execute('petstore__getPetById', { petId: 1 });
    expect(petstore.requests[0].url).toBe('/v2/pet/1?key=k1');
  });
});

describe('buildApiRequest', () => {
  const binding = (extra: Partial<OpenApiBinding>): OpenApiBinding => ({ kind: 'openapi', api: 'a', operationId: 'getItem', method: 'get', path: '/items/{id}', parameters: [{ name: 'id', in: 'path', arg: 'id' }], ...extra });

  it.each([
    ['percent-encodes a path parameter', binding({}), { id: 'a/b c' }, 'https://api.test/v1/items/a%2Fb%20c'],
    ['repeats an exploded array', binding({ parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'tag', in: 'query', arg: 'tag' }] }), { id: 1, tag: ['x', 'y'] }, 'https://api.test/v1/items/1?tag=x&tag=y'],
    ['joins an array that is not exploded', binding({ parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'tag', in: 'query', arg: 'tag', explode: false }] }), { id: 1, tag: ['x', 'y'] }, 'https://api.test/v1/items/1?tag=x%2Cy'],
    ['writes a deepObject', binding({ parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'filter', in: 'query', arg: 'filter', style: 'deepObject' }] }), { id: 1, filter: { a: 1 } }, 'https://api.test/v1/items/1?filter%5Ba%5D=1'],
    ['leaves out a parameter not given', binding({ parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'q', in: 'query', arg: 'q' }] }), { id: 1 }, 'https://api.test/v1/items/1'],
    ['uses a renamed argument for clashing names', binding({ parameters: [{ name: 'id', in: 'path', arg: 'path_id' }, { name: 'id', in: 'query', arg: 'query_id' }] }), { path_id: 7, query_id: 8 }, 'https://api.test/v1/items/7?id=8'],
  ])('%s', (_what, b, args, url) => {
    expect(buildApiRequest(b, 'https://api.test/v1/', args).url.href).toBe(url);
  });

  it('never lets a path parameter change which endpoint is called: empty, dot segments (encoded too) are refused, anything else stays in its segment', () => {
    for (const id of ['', '.', '..']) {
      expect(() => buildApiRequest(binding({}), 'https://api.test/v1/', { id }), JSON.stringify(id)).toThrow(/path parameter "id" may not be/);
    }
    // Percent signs are encoded too: %2e arrives as %252e, a name like any other.
    for (const id of ['...', 'a..b', '../x', '..%2f', '/', '?x=1', '#frag', '\\..', ' ..', '.. ', 'x/../..', '%2e', '%2E%2e', '.%2E']) {
      const { url } = buildApiRequest(binding({}), 'https://api.test/v1/', { id });
      expect(url.pathname.startsWith('/v1/items/'), `${JSON.stringify(id)} → ${url.href}`).toBe(true);
      expect(url.pathname.split('/'), `${JSON.stringify(id)} → ${url.href}`).toHaveLength(4);
      expect(url.search + url.hash).toBe('');
    }
  });

  it('puts headers, cookies and a whole-body argument where they belong', () => {
    const request = buildApiRequest(
      binding({ method: 'put', parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'X-Trace', in: 'header', arg: 'X-Trace' }, { name: 'session', in: 'cookie', arg: 'session' }], body: { contentType: 'application/json', required: true, arg: 'body' } }),
      'https://api.test',
      { id: 1, 'X-Trace': 'abc', session: 's 1', body: [1, 2] },
    );
    expect(request).toMatchObject({ method: 'PUT', headers: { 'x-trace': 'abc', cookie: 'session=s%201', 'content-type': 'application/json' }, body: '[1,2]' });
  });
});

describe('buildApiRequest refuses what a request cannot carry exactly, naming the parameter', () => {
  const binding: OpenApiBinding = {
    kind: 'openapi', api: 'a', operationId: 'send', method: 'post', path: '/items/{id}',
    parameters: [{ name: 'id', in: 'path', arg: 'id' }, { name: 'q', in: 'query', arg: 'q' }, { name: 'X-Note', in: 'header', arg: 'note' }, { name: 'session', in: 'cookie', arg: 'session' }],
    body: { contentType: 'application/x-www-form-urlencoded', required: false, properties: ['text'] },
  };

  it.each([
    ['a path parameter with half of a surrogate pair', { id: 'a\ud800' }, /parameter "id" holds half of a surrogate pair/],
    ['a query value with half of a surrogate pair (a URL would carry U+FFFD)', { id: 1, q: '\udc00x' }, /parameter "q" holds half of a surrogate pair/],
    ['a query key from an object with half of a surrogate pair', { id: 1, q: { ['k\ud800']: 1 } }, /parameter "q" holds half of a surrogate pair/],
    ['a cookie with half of a surrogate pair', { id: 1, session: '\ud800' }, /parameter "session" holds half of a surrogate pair/],
    ['a form field with half of a surrogate pair', { id: 1, text: 'x\udbff' }, /form field "text" holds half of a surrogate pair/],
    ['a header with a line break (no second header)', { id: 1, note: 'a\r\nX-Injected: 1' }, /header parameter "X-Note" may hold only Latin-1/],
    ['a header beyond Latin-1', { id: 1, note: '€' }, /header parameter "X-Note" may hold only Latin-1/],
    ['a header with a control character', { id: 1, note: 'a\u007fb' }, /header parameter "X-Note" may hold only Latin-1/],
  ])('%s', (_what, args, message) => {
    expect(() => buildApiRequest(binding, 'https://api.test', args)).toThrow(message);
  });

  it('sends Latin-1 and a tab in a header, and any well-formed text elsewhere, as given', () => {
    const request = buildApiRequest(binding, 'https://api.test', { id: 'é€😀', q: '😀', note: 'ü\tx', session: '€', text: '😀' });
    expect(request.url.href).toBe('https://api.test/items/%C3%A9%E2%82%AC%F0%9F%98%80?q=%F0%9F%98%80');
    expect(request).toMatchObject({ headers: { 'x-note': 'ü\tx', cookie: 'session=%E2%82%AC' }, body: 'text=%F0%9F%98%80' });
  });

  it('is an error result of the tool, with the reason, and nothing is sent', async () => {
    const api = await startServer((_req, res) => res.end('{}'));
    const settings: ApiSettings = { name: 'a', spec: 'a.json', base_url: api.url, timeout_ms: 5_000 };
    const registry = new ToolRegistry({ workDir: tempDir() });
    const spec = { name: 'a__send', description: 'send', category: 'adapter' as const, inputSchema: { type: 'object' as const, properties: { id: { type: 'string' }, note: { type: 'string' } } }, adapter: binding };
    registry.register(createOpenApiTool(spec as never, settings, { http: loopbackOnly(), env: {} }), 'a.json');
    expect(await registry.execute('a__send', { id: 'x\ud800', note: 'n' })).toMatchObject({ ok: false, error: { code: 'FORGE_API_REQUEST', message: 'a__send: cannot build the request: parameter "id" holds half of a surrogate pair, which has no UTF-8 form' } });
    expect(api.requests).toHaveLength(0);
  });
});
