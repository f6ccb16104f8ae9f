/**
 * The operations of a dereferenced OpenAPI 3.x or Swagger 2.0 document, in
 * one shape: method, path, parameters with their schemas, and the request
 * body (JSON, or a urlencoded form) — and where the API lives.
 */
import type { ParameterLocation } from '../../runtime/tools/adapters/settings.ts';
import type { JSONSchema } from '../../runtime/tools/model.ts';

export interface ApiParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  schema: JSONSchema;
  description?: string;
  style?: string;
  explode?: boolean;
}

export interface ApiOperation {
  /** operationId, or one derived from method and path (get /pet/{petId} → get_pet_petId). */
  id: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  deprecated: boolean;
  parameters: ApiParameter[];
  body?: { contentType: string; schema: JSONSchema; required: boolean; description?: string };
  /** Why Forge cannot call this operation (a file upload...), if it cannot. */
  unsupported?: string;
}

type Doc = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const FORM = 'application/x-www-form-urlencoded';

function isSwagger2(doc: Doc): boolean {
  return typeof doc.swagger === 'string' && doc.swagger.startsWith('2');
}

export function listOperations(doc: Doc): ApiOperation[] {
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries<Doc>(doc.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const op = item[method] as Doc | undefined;
      if (!op) continue;
      const params = mergeParameters(item.parameters ?? [], op.parameters ?? []);
      const operation: ApiOperation = {
        id: typeof op.operationId === 'string' && op.operationId ? op.operationId : derivedId(method, path),
        method,
        path,
        summary: op.summary || undefined,
        description: op.description || undefined,
        deprecated: op.deprecated === true,
        parameters: [],
      };
      if (isSwagger2(doc)) readSwagger2(operation, params, op.consumes ?? doc.consumes);
      else readOpenApi3(operation, params, op.requestBody);
      operations.push(operation);
    }
  }
  return operations;
}

/** Operation-level parameters replace path-level ones of the same name and location. */
function mergeParameters(pathLevel: Doc[], opLevel: Doc[]): Doc[] {
  const key = (p: Doc) => `${p.in}:${p.name}`;
  const merged = new Map(pathLevel.map((p) => [key(p), p]));
  for (const p of opLevel) merged.set(key(p), p);
  return [...merged.values()];
}

function derivedId(method: string, path: string): string {
  const words = path.split('/').map((s) => s.replace(/[{}]/g, '')).filter(Boolean);
  return [method, ...words].join('_').replace(/[^a-zA-Z0-9_]/g, '_');
}

function readOpenApi3(operation: ApiOperation, params: Doc[], requestBody: Doc | undefined) {
  for (const p of params) {
    if (!['path', 'query', 'header', 'cookie'].includes(p.in)) continue;
    const schema = p.schema ?? (p.content ? (Object.values(p.content)[0] as Doc)?.schema : undefined) ?? {};
    operation.parameters.push({
      ...apiParameter(p, schema),
      ...(p.style ? { style: p.style } : {}),
      ...(typeof p.explode === 'boolean' ? { explode: p.explode } : {}),
    });
  }
  if (!requestBody?.content) return;
  const types = Object.keys(requestBody.content);
  const json = types.find((t) => /^application\/(.+\+)?json\b/i.test(t));
  const chosen = json ?? types.find((t) => t.toLowerCase().startsWith(FORM));
  if (!chosen) {
    if (requestBody.required) operation.unsupported = `its request body is ${types.join(' or ')}, which Forge cannot send (JSON and urlencoded forms only)`;
    return;
  }
  operation.body = {
    contentType: json ? 'application/json' : FORM,
    schema: requestBody.content[chosen].schema ?? {},
    required: requestBody.required === true,
    ...(requestBody.description ? { description: requestBody.description } : {}),
  };
}

function readSwagger2(operation: ApiOperation, params: Doc[], consumes: string[] | undefined) {
  const form: Doc[] = [];
  for (const p of params) {
    if (p.in === 'body') {
      operation.body = { contentType: 'application/json', schema: p.schema ?? {}, required: p.required === true, ...(p.description ? { description: p.description } : {}) };
    } else if (p.in === 'formData') {
      form.push(p);
    } else if (['path', 'query', 'header'].includes(p.in)) {
      operation.parameters.push({ ...apiParameter(p, swagger2Schema(p)), ...collectionStyle(p.collectionFormat) });
    }
  }
  if (form.length === 0) return;
  if (form.some((p) => p.type === 'file') || (consumes?.length && !consumes.some((c) => c.startsWith(FORM)))) {
    if (form.some((p) => p.required)) operation.unsupported = 'it takes a multipart form (a file upload), which Forge cannot send';
    return;
  }
  operation.body = {
    contentType: FORM,
    schema: {
      type: 'object',
      properties: Object.fromEntries(form.map((p) => [p.name, withDescription(swagger2Schema(p), p.description)])),
      required: form.filter((p) => p.required).map((p) => p.name),
    },
    required: form.some((p) => p.required),
  };
}

/** What a parameter is in both versions: a path parameter is always required. */
function apiParameter(p: Doc, schema: JSONSchema): ApiParameter {
  return { name: p.name, in: p.in, required: p.in === 'path' || p.required === true, schema: withDescription(schema, p.description), ...(p.description ? { description: p.description } : {}) };
}

/** A Swagger 2.0 non-body parameter's schema fields, as a JSON Schema. */
function swagger2Schema(p: Doc): JSONSchema {
  const fields = ['type', 'format', 'items', 'enum', 'default', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'multipleOf'];
  const schema: JSONSchema = {};
  for (const f of fields) if (p[f] !== undefined) schema[f] = f === 'items' ? swagger2Schema(p.items) : p[f];
  return schema;
}

function collectionStyle(format: string | undefined): { style?: string; explode?: boolean } {
  switch (format) {
    case 'multi':
      return { style: 'form', explode: true };
    case 'ssv':
      return { style: 'spaceDelimited', explode: false };
    case 'pipes':
      return { style: 'pipeDelimited', explode: false };
    case undefined:
      return {};
    default:
      return { style: 'form', explode: false };
  }
}

function withDescription(schema: JSONSchema, description: string | undefined): JSONSchema {
  return description && schema.description === undefined ? { ...schema, description } : schema;
}

/**
 * Where the API lives: OpenAPI 3's first server (its variables at their
 * defaults, a relative URL resolved against the document's own URL), or
 * Swagger 2's scheme, host and basePath.
 */
export function documentBaseUrl(doc: Doc, documentUrl?: string): string | undefined {
  if (isSwagger2(doc)) {
    const scheme = (doc.schemes as string[] | undefined)?.includes('https') ? 'https' : ((doc.schemes as string[] | undefined)?.[0] ?? 'https');
    const origin = doc.host ? `${scheme}://${doc.host}` : documentUrl ? new URL(documentUrl).origin : undefined;
    return origin ? `${origin}${doc.basePath ?? ''}` : undefined;
  }
  const server = (doc.servers as Doc[] | undefined)?.[0];
  if (!server?.url) return documentUrl ? new URL(documentUrl).origin : undefined;
  let url = String(server.url);
  for (const [name, variable] of Object.entries<Doc>(server.variables ?? {})) url = url.split(`{${name}}`).join(String(variable.default ?? ''));
  try {
    return new URL(url, documentUrl).href.replace(/\/$/, '');
  } catch {
    return undefined;
  }
}
