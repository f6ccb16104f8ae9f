/**
 * Schemas written by someone else (an MCP server, an OpenAPI document),
 * made into plain JSON Schema that the registry's validator compiles
 * without complaint:
 *
 * - OpenAPI 3.0's `nullable: true` becomes a type that allows null;
 * - keywords that only document (xml, example, discriminator,
 *   externalDocs) are dropped, and `example` becomes `examples`;
 * - a `format` the validator does not know is dropped (it would only warn);
 * - a `$ref` that does not resolve inside the schema itself is what is
 *   left of a recursive OpenAPI schema after dereferencing: it is inlined
 *   from the document, and where it recurs inside itself it becomes
 *   "any value" (a model cannot fill an infinite schema anyway).
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { JSONSchema } from '../../runtime/tools/model.ts';
import { SCHEMA_MAPS, SCHEMA_VALUES } from '../../runtime/tools/schema-keywords.ts';

const KNOWN_FORMATS = new Set(Object.keys(fullFormats));
const DOCUMENTATION_ONLY = new Set(['xml', 'discriminator', 'externalDocs', 'example', 'x-examples']);

/** `document`: where refs that do not resolve in the schema itself are looked up (an OpenAPI document). */
export function normalizeExternalSchema(schema: JSONSchema, document?: Record<string, unknown>): JSONSchema {
  return normalize(schema, { root: schema, document, expanding: [] }) as JSONSchema;
}

interface Scope {
  root: JSONSchema;
  document?: Record<string, unknown>;
  /** Refs being inlined on the way here: meeting one again is recursion. */
  expanding: string[];
}

function normalize(node: unknown, scope: Scope): unknown {
  if (Array.isArray(node)) return node.map((n) => normalize(n, scope));
  if (!node || typeof node !== 'object') return node;
  const input = node as Record<string, unknown>;
  if (typeof input.$ref === 'string' && lookup(input.$ref, scope.root) === undefined) {
    const target = scope.document ? lookup(input.$ref, scope.document) : undefined;
    if (target !== undefined && !scope.expanding.includes(input.$ref)) {
      return normalize(target, { ...scope, expanding: [...scope.expanding, input.$ref] });
    }
    return { description: `${typeof input.description === 'string' ? input.description + ' ' : ''}(a recursive structure: any value)`.trim() };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (DOCUMENTATION_ONLY.has(key)) continue;
    if (key === 'nullable') continue;
    if (key === 'format' && typeof value === 'string' && !KNOWN_FORMATS.has(value)) continue;
    if (SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, scope)]));
    } else if (SCHEMA_VALUES.has(key)) {
      out[key] = normalize(value, scope);
    } else {
      out[key] = value;
    }
  }
  if (input.example !== undefined && out.examples === undefined) out.examples = [input.example];
  if (input.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}

/** What a local `$ref` ("#/$defs/Node") points at inside `root`, if anything. */
function lookup(ref: string, root: Record<string, unknown>): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
