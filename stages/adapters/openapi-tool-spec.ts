/**
 * An OpenAPI operation as a Forge tool spec: `<api>__<operationId>`, one
 * input schema that merges the path, query, header and cookie parameters
 * with the JSON body, and the binding the runtime uses to put each argument
 * back where it belongs.
 *
 * A body that is a plain object gives its properties as top-level arguments
 * (what a model fills most reliably); any other body — an array, a
 * composition, a property named like a parameter — is one `body` argument.
 */
import type { OpenApiBinding, OpenApiBody, OpenApiParameter } from '../../runtime/tools/adapters/settings.ts';
import { adapterToolName } from '../../runtime/tools/adapters/tool-name.ts';
import type { JSONSchema, ToolSpec } from '../../runtime/tools/model.ts';
import { normalizeExternalSchema } from './external-schema.ts';
import type { ApiOperation } from './openapi-operations.ts';

const READ_METHODS = new Set(['get', 'head', 'options']);
const MAX_DESCRIPTION = 1_000;

/** `document`: the dereferenced OpenAPI document, where recursive schemas are looked up. */
export function operationToolSpec(apiName: string, op: ApiOperation, timeoutMs: number, document?: Record<string, unknown>): ToolSpec {
  // No prototype: an API's parameter or body property named __proto__ (or constructor) stays an argument of its own.
  const properties: Record<string, JSONSchema> = Object.create(null);
  const required: string[] = [];
  const parameters: OpenApiParameter[] = [];

  const clashing = new Set(op.parameters.filter((p, i) => op.parameters.findIndex((q) => q.name === p.name) !== i).map((p) => p.name));
  for (const p of op.parameters) {
    const arg = clashing.has(p.name) ? `${p.in}_${p.name}` : p.name;
    properties[arg] = normalizeExternalSchema(p.schema, document);
    if (p.required) required.push(arg);
    parameters.push({ name: p.name, in: p.in, arg, ...(p.style ? { style: p.style } : {}), ...(p.explode !== undefined ? { explode: p.explode } : {}) });
  }

  let body: OpenApiBody | undefined;
  if (op.body) {
    const schema = withoutReadOnly(normalizeExternalSchema(op.body.schema, document));
    const flat = flattenable(schema, properties);
    if (flat) {
      for (const [name, propSchema] of Object.entries(flat.properties)) properties[name] = propSchema;
      if (op.body.required) required.push(...flat.required);
      body = { contentType: op.body.contentType, required: op.body.required, properties: Object.keys(flat.properties) };
    } else {
      const arg = properties.body ? 'request_body' : 'body';
      properties[arg] = op.body.description && !schema.description ? { ...schema, description: op.body.description } : schema;
      if (op.body.required) required.push(arg);
      body = { contentType: op.body.contentType, required: op.body.required, arg };
    }
  }

  const adapter: OpenApiBinding = { kind: 'openapi', api: apiName, operationId: op.id, method: op.method, path: op.path, parameters, ...(body ? { body } : {}) };
  return {
    name: adapterToolName(apiName, op.id),
    description: describe(op),
    category: 'adapter',
    inputSchema: { type: 'object', properties, ...(required.length ? { required: [...new Set(required)] } : {}), additionalProperties: false },
    tags: [READ_METHODS.has(op.method) ? 'read' : 'write'],
    timeoutMs,
    adapter,
  };
}

function flattenable(schema: JSONSchema, taken: Record<string, unknown>): { properties: Record<string, JSONSchema>; required: string[] } | undefined {
  const props = schema.properties as Record<string, JSONSchema> | undefined;
  const plainObject = schema.type === 'object' || (schema.type === undefined && props !== undefined);
  if (!plainObject || !props || Object.keys(props).length === 0) return undefined;
  if (schema.allOf || schema.anyOf || schema.oneOf || schema.patternProperties) return undefined;
  if (schema.additionalProperties && schema.additionalProperties !== false) return undefined;
  if (Object.keys(props).some((name) => Object.hasOwn(taken, name))) return undefined;
  return { properties: props, required: (schema.required as string[] | undefined) ?? [] };
}

/** readOnly properties belong to responses: a request does not send them (OpenAPI 3, "readOnly"). */
function withoutReadOnly(schema: JSONSchema): JSONSchema {
  const props = schema.properties as Record<string, JSONSchema> | undefined;
  const items = schema.items as JSONSchema | undefined;
  if (!props && !(items && typeof items === 'object' && !Array.isArray(items))) return schema;
  const out: JSONSchema = { ...schema };
  if (props) {
    const kept = Object.entries(props).filter(([, p]) => p?.readOnly !== true);
    out.properties = Object.fromEntries(kept.map(([k, p]) => [k, withoutReadOnly(p)]));
    if (Array.isArray(schema.required)) out.required = (schema.required as string[]).filter((r) => kept.some(([k]) => k === r));
  }
  if (items && typeof items === 'object' && !Array.isArray(items)) out.items = withoutReadOnly(items);
  return out;
}

function describe(op: ApiOperation): string {
  const parts = [op.summary, op.description && op.description !== op.summary ? op.description : undefined].filter(Boolean) as string[];
  const joined = parts.join('\n\n').trim();
  // Some documents hold pages of markdown per operation; a model needs the gist.
  const text = joined.length > MAX_DESCRIPTION ? `${joined.slice(0, MAX_DESCRIPTION - 1)}…` : joined;
  const endpoint = `${op.method.toUpperCase()} ${op.path}`;
  const deprecated = op.deprecated ? ' (deprecated)' : '';
  return text ? `${text}\n\n${endpoint}${deprecated}` : `${endpoint}${deprecated}`;
}
