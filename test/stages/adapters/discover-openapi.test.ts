import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { discoverOpenApiTools } from '../../../stages/adapters/discover-openapi.ts';
import { readRecordedAdapters } from '../../../stages/adapters/recorded-manifest.ts';
import type { ApiConfig } from '../../../stages/config/adapter-config.ts';
import { startServer } from '../../helpers/http-server.ts';
import { fixturesDir, tempDir } from '../../helpers/project.ts';

const petstoreSpec = readFileSync(join(fixturesDir, 'openapi', 'petstore-swagger2.json'), 'utf8');

function apiConfig(spec: string, extra: Partial<ApiConfig> = {}): ApiConfig {
  const specIsUrl = spec.startsWith('http');
  return { name: 'petstore', spec, specLocation: spec, specIsUrl, timeout_ms: 1000, at: { file: 'forge.yaml', line: 3, column: 5 }, ...extra };
}

describe('discoverOpenApiTools', () => {
  it('fetches a spec from a URL, and the offline mode reuses what a build recorded', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petstoreSpec));
    const live = await discoverOpenApiTools([apiConfig(`${server.url}/swagger.json`, { include: ['*Pet*'], exclude: ['uploadFile'] })], 'live', undefined, new HttpClient());
    expect(live.diagnostics).toEqual([]);
    expect(live.fetched).toEqual(['petstore']);
    expect(live.tools.map((t) => t.spec.name).sort()).toEqual(['petstore__addPet', 'petstore__deletePet', 'petstore__findPetsByStatus', 'petstore__findPetsByTags', 'petstore__getPetById', 'petstore__updatePet', 'petstore__updatePetWithForm']);
    // include/exclude recorded beside the operations they chose: a source command knows what the list was chosen by.
    expect(live.apis).toEqual([{ name: 'petstore', spec: `${server.url}/swagger.json`, base_url: 'http://petstore.swagger.io/v2', timeout_ms: 1000, include: ['*Pet*'], exclude: ['uploadFile'] }]);

    const agentJson = join(tempDir(), 'agent.json');
    writeFileSync(agentJson, JSON.stringify({ tools: live.tools.map((t) => t.spec), apis: live.apis }));
    const offline = await discoverOpenApiTools([apiConfig(`${server.url}/swagger.json`, { exclude: ['deletePet'] })], 'offline', readRecordedAdapters(agentJson), new HttpClient());
    expect(server.requests).toHaveLength(1);
    expect(offline.fetched).toEqual([]);
    expect(offline.tools.map((t) => t.spec.name)).not.toContain('petstore__deletePet');
    expect(offline.tools.map((t) => t.spec.name)).toContain('petstore__getPetById');
  });

  it("a source command (recorded-or-live) takes the recorded operations only when they were recorded from today's spec and globs", async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petstoreSpec));
    const url = `${server.url}/swagger.json`;
    const built = await discoverOpenApiTools([apiConfig(url, { include: ['getPetById'] })], 'live', undefined, new HttpClient());
    const agentJson = join(tempDir(), 'agent.json');
    writeFileSync(agentJson, JSON.stringify({ tools: built.tools.map((t) => t.spec), apis: built.apis }));
    const names = (found: { tools: { spec: { name: string } }[] }) => found.tools.map((t) => t.spec.name).sort();

    const same = await discoverOpenApiTools([apiConfig(url, { include: ['getPetById'] })], 'recorded-or-live', readRecordedAdapters(agentJson), new HttpClient());
    expect(same.fetched).toEqual([]);
    expect(names(same)).toEqual(['petstore__getPetById']);
    // include widened since the build: the recorded list cannot hold what it now lets in; the spec is read again.
    const widened = await discoverOpenApiTools([apiConfig(url, { include: ['get*'] })], 'recorded-or-live', readRecordedAdapters(agentJson), new HttpClient());
    expect(widened.fetched).toEqual(['petstore']);
    expect(names(widened)).toEqual(['petstore__getInventory', 'petstore__getOrderById', 'petstore__getPetById', 'petstore__getUserByName']);
    // Another spec URL: read, never the other spec's operations.
    const moved = await discoverOpenApiTools([apiConfig(`${server.url}/other.json`, { include: ['getPetById'] })], 'recorded-or-live', readRecordedAdapters(agentJson), new HttpClient());
    expect(moved.fetched).toEqual(['petstore']);
    expect(server.requests.map((r) => r.url)).toEqual(['/swagger.json', '/swagger.json', '/other.json']);
  });

  it('warns of an exclude pattern that matches no operation, naming the one it likely meant, which stays in', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petstoreSpec));
    const found = await discoverOpenApiTools([apiConfig(`${server.url}/swagger.json`, { include: ['getPetById', 'deletePet'], exclude: ['deletePett'] })], 'live', undefined, new HttpClient());
    expect(found.tools.map((t) => t.spec.name).sort()).toEqual(['petstore__deletePet', 'petstore__getPetById']);
    expect(found.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_API_FILTER', message: 'exclude pattern "deletePett" matches no operation of API "petstore", so "deletePet" is not left out', hint: 'did you mean "deletePet"?' }]);
  });

  it('offline, matches include/exclude against the operationId, not the sanitized tool name', async () => {
    const spec = { openapi: '3.0.0', info: { title: 't', version: '1' }, servers: [{ url: 'https://api.example.com' }], paths: { '/repos/{id}': { get: { operationId: 'repos/get', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } } } } };
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(spec)));
    const api = apiConfig(`${server.url}/openapi.json`, { name: 'gh', include: ['repos/*'] });
    const live = await discoverOpenApiTools([api], 'live', undefined, new HttpClient());
    expect(live.tools.map((t) => t.spec.name)).toEqual(['gh__repos_get']);

    const agentJson = join(tempDir(), 'agent.json');
    writeFileSync(agentJson, JSON.stringify({ tools: live.tools.map((t) => t.spec), apis: live.apis }));
    const offline = await discoverOpenApiTools([api], 'offline', readRecordedAdapters(agentJson), new HttpClient());
    expect(offline.diagnostics).toEqual([]);
    expect(offline.tools.map((t) => t.spec.name)).toEqual(['gh__repos_get']);
  });

  it('reports a spec it cannot read at the API\'s line, with a hint', async () => {
    const result = await discoverOpenApiTools([apiConfig(join(tempDir(), 'missing.json'))], 'live', undefined, new HttpClient());
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'FORGE_API_SPEC', line: 3, message: expect.stringContaining('cannot read the OpenAPI document of API "petstore"') }]);
  });

  it('needs a recorded list to build offline from a URL', async () => {
    const result = await discoverOpenApiTools([apiConfig('https://api.example.com/openapi.json')], 'offline', undefined, new HttpClient());
    expect(result.diagnostics).toMatchObject([{ code: 'FORGE_API_OFFLINE', hint: 'build once without --offline so its operations are recorded in agent.json' }]);
  });

  it('warns about an include pattern that matches nothing, and an operation it cannot call', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'api.json'), JSON.stringify({ openapi: '3.0.0', info: { title: 't', version: '1' }, servers: [{ url: 'https://x.test' }], paths: { '/up': { post: { operationId: 'upload', requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object' } } } }, responses: { 200: { description: 'ok' } } } } } }));
    const result = await discoverOpenApiTools([apiConfig(join(dir, 'api.json'), { include: ['upload', 'uplaod'] })], 'live', undefined, new HttpClient());
    expect(result.diagnostics.map((d) => d.code)).toEqual(['FORGE_API_FILTER', 'FORGE_API_OPERATION']);
    expect(result.tools).toEqual([]);
  });
});
