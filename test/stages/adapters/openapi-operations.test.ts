import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeExternalSchema } from '../../../stages/adapters/external-schema.ts';
import { loadOpenApiDocument } from '../../../stages/adapters/openapi-document.ts';
import { documentBaseUrl, listOperations } from '../../../stages/adapters/openapi-operations.ts';
import { operationToolSpec } from '../../../stages/adapters/openapi-tool-spec.ts';
import { fixturesDir, writeProject } from '../../helpers/project.ts';

const PETSTORE_OPERATIONS = [
  'addPet', 'updatePet', 'findPetsByStatus', 'findPetsByTags', 'getPetById', 'updatePetWithForm', 'deletePet', 'uploadFile',
  'getInventory', 'placeOrder', 'getOrderById', 'deleteOrder',
  'createUser', 'createUsersWithArrayInput', 'createUsersWithListInput', 'loginUser', 'logoutUser', 'getUserByName', 'updateUser', 'deleteUser',
];

describe.each(['petstore-openapi3.json', 'petstore-swagger2.json'])('the Petstore from %s', (fixture) => {
  it('lists every operation, and finds the API at the spec\'s server', async () => {
    const { doc, files } = await loadOpenApiDocument(join(fixturesDir, 'openapi', fixture));
    expect(listOperations(doc).map((o) => o.id).sort()).toEqual([...PETSTORE_OPERATIONS].sort());
    expect(documentBaseUrl(doc)).toBe('http://petstore.swagger.io/v2');
    expect(files).toEqual([join(fixturesDir, 'openapi', fixture)]);
  });

  it('merges parameters and a JSON body into one input schema, and binds each argument', async () => {
    const { doc } = await loadOpenApiDocument(join(fixturesDir, 'openapi', fixture));
    const specs = new Map(listOperations(doc).map((op) => [op.id, operationToolSpec('petstore', op, 5000)]));
    expect(specs.get('getPetById')).toMatchObject({
      name: 'petstore__getPetById',
      category: 'adapter',
      tags: ['read'],
      timeoutMs: 5000,
      inputSchema: { type: 'object', properties: { petId: { type: 'integer', format: 'int64' } }, required: ['petId'], additionalProperties: false },
      adapter: { kind: 'openapi', api: 'petstore', method: 'get', path: '/pet/{petId}', parameters: [{ name: 'petId', in: 'path', arg: 'petId' }] },
    });
    const addPet = specs.get('addPet')!;
    expect(addPet.tags).toEqual(['write']);
    expect(addPet.inputSchema).toMatchObject({ properties: { name: { type: 'string' }, photoUrls: { type: 'array' } }, required: ['name', 'photoUrls'] });
    expect(addPet.adapter).toMatchObject({ body: { contentType: 'application/json', required: true, properties: expect.arrayContaining(['name', 'photoUrls', 'status']) } });
    // An array body cannot be flattened: it is one `body` argument.
    expect(specs.get('createUsersWithArrayInput')).toMatchObject({ inputSchema: { properties: { body: { type: 'array' } }, required: ['body'] }, adapter: { body: { arg: 'body' } } });
    expect(specs.get('deletePet')!.adapter).toMatchObject({ parameters: expect.arrayContaining([{ name: 'api_key', in: 'header', arg: 'api_key' }]) });
    expect(specs.get('updatePetWithForm')!.adapter).toMatchObject({ body: { contentType: 'application/x-www-form-urlencoded', properties: ['name', 'status'] } });
  });
});

describe('OpenAPI documents beyond the Petstore', () => {
  const load = async (doc: object) => (await loadOpenApiDocument(join(writeProject({ 'api.json': JSON.stringify(doc) }), 'api.json'))).doc;

  it('derives a stable name when operationId is missing, and renames clashing parameters', async () => {
    const doc = await load({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/orgs/{id}/members': {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          get: { parameters: [{ name: 'id', in: 'query', schema: { type: 'integer' } }], responses: { 200: { description: 'ok' } } },
        },
      },
    });
    const [op] = listOperations(doc);
    const spec = operationToolSpec('org', op, 1000);
    expect(spec.name).toBe('org__get_orgs_id_members');
    expect(spec.inputSchema).toMatchObject({ properties: { path_id: { type: 'string' }, query_id: { type: 'integer' } }, required: ['path_id'] });
  });

  it('keeps a body whose property names a parameter as one argument', async () => {
    const doc = await load({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/things/{id}': { put: { operationId: 'put', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, v: { type: 'number' } } } } } }, responses: { 200: { description: 'ok' } } } } },
    });
    const spec = operationToolSpec('t', listOperations(doc)[0], 1000);
    expect(spec.inputSchema).toMatchObject({ properties: { id: { type: 'string' }, body: { type: 'object' } }, required: ['id', 'body'] });
  });

  it('flattens a body whose properties are named like what every object has into arguments of their own', async () => {
    const properties = JSON.parse('{"__proto__": {"type": "string"}, "constructor": {"type": "number"}, "toString": {"type": "boolean"}}');
    const doc = await load({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/things': { post: { operationId: 'post', requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties, required: ['constructor'] } } } }, responses: { 200: { description: 'ok' } } } } },
    });
    const spec = operationToolSpec('t', listOperations(doc)[0], 1000);
    const args = spec.inputSchema.properties as Record<string, unknown>;
    expect(Object.keys(args).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(args, '__proto__')?.value).toEqual({ type: 'string' });
    expect(spec.inputSchema.required).toEqual(['constructor']);
  });

  it('marks an operation whose required body Forge cannot send', async () => {
    const doc = await load({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/upload': { post: { operationId: 'upload', requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, responses: { 200: { description: 'ok' } } } } },
    });
    expect(listOperations(doc)[0].unsupported).toContain('application/octet-stream');
  });

  it('keeps a recursive schema usable', async () => {
    const doc = await load({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      components: { schemas: { Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } },
      paths: { '/tree': { post: { operationId: 'plant', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } }, responses: { 200: { description: 'ok' } } } } },
    });
    const spec = operationToolSpec('t', listOperations(doc)[0], 1000, doc);
    expect(JSON.stringify(spec.inputSchema)).not.toContain('$ref');
    // The body's own level is inlined (and flattened); where the structure recurs, any value.
    expect(spec.inputSchema).toMatchObject({ properties: { name: { type: 'string' }, children: { type: 'array', items: { description: '(a recursive structure: any value)' } } } });
  });

  it.each([
    ['Swagger 2 host, basePath and https', { swagger: '2.0', host: 'api.example.com', basePath: '/v1', schemes: ['http', 'https'] }, undefined, 'https://api.example.com/v1'],
    ['OpenAPI 3 server variables at their defaults', { openapi: '3.0.0', servers: [{ url: 'https://{region}.api.example.com/{version}', variables: { region: { default: 'eu' }, version: { default: 'v2' } } }] }, undefined, 'https://eu.api.example.com/v2'],
    ['a relative server, against the document\'s URL', { openapi: '3.0.0', servers: [{ url: '/api' }] }, 'https://docs.example.com/spec/openapi.json', 'https://docs.example.com/api'],
    ['no server and a local document', { openapi: '3.0.0' }, undefined, undefined],
  ])('finds the base URL: %s', (_what, doc, documentUrl, expected) => {
    expect(documentBaseUrl(doc, documentUrl)).toBe(expected);
  });
});

describe('normalizeExternalSchema', () => {
  it.each([
    ['nullable becomes a null type', { type: 'string', nullable: true }, { type: ['string', 'null'] }],
    ['an unknown format is dropped, a known one kept', { type: 'object', properties: { a: { type: 'string', format: 'color' }, b: { type: 'string', format: 'email' } } }, { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string', format: 'email' } } }],
    ['example becomes examples; xml is dropped', { type: 'string', example: 'x', xml: { name: 'n' } }, { type: 'string', examples: ['x'] }],
    ['a ref that resolves inside the schema is kept', { $defs: { A: { type: 'string' } }, properties: { a: { $ref: '#/$defs/A' } } }, { $defs: { A: { type: 'string' } }, properties: { a: { $ref: '#/$defs/A' } } }],
    ['a ref that does not resolve becomes any value', { properties: { a: { $ref: '#/components/schemas/Gone' } } }, { properties: { a: { description: '(a recursive structure: any value)' } } }],
  ])('%s', (_what, input, expected) => {
    expect(normalizeExternalSchema(input)).toEqual(expected);
  });
});
