/**
 * Where a forge request's schema reuses a schema through `$ref`: forge_tool
 * refuses that (schemas that reuse each other make checking a small
 * argument take exponential time on the server's thread), and a tool kept
 * from before it did is not registered.
 */
import { pointer } from '../local-schema.ts';
import type { ForgeRequest } from './forge-request.ts';

/** Keywords whose value is data, not a schema: a "$ref" inside is a value like any other. */
const DATA_KEYWORDS = new Set(['default', 'examples', 'enum', 'const']);
/** Keywords whose value maps names to schemas: a name there ("default", "enum") is no keyword. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/**
 * Where in `schema` a `$ref` is (a JSON pointer to the object holding it), or undefined. Looked for in
 * every object but the values of data keywords (a property's default may hold a "$ref" of its own).
 */
export function refAt(schema: unknown): string | undefined {
  // Breadth first (the $ref nearest the top is named), read by index: shift() would make a large schema quadratic.
  const pending: [unknown, string, boolean][] = [[schema, '', false]];
  for (let next = 0; next < pending.length; next++) {
    const [node, at, names] = pending[next]!;
    if (node === null || typeof node !== 'object') continue;
    if (!names && !Array.isArray(node) && typeof (node as Record<string, unknown>).$ref === 'string') return at;
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}/${pointer(key)}`;
      if (names || Array.isArray(node)) pending.push([value, here, false]);
      else if (!DATA_KEYWORDS.has(key)) pending.push([value, here, NAME_MAPS.has(key)]);
    }
  }
  return undefined;
}

/** The first `$ref` in a request's schemas, as "inputSchema/properties/x", or undefined. */
export function requestRef(request: Pick<ForgeRequest, 'inputSchema' | 'outputSchema'>): string | undefined {
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const at = refAt(request[key]);
    if (at !== undefined) return `${key}${at}`;
  }
  return undefined;
}
