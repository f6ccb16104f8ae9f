/**
 * JSON Schema keywords a server refuses in tool parameters. Gemini (its own
 * API, its OpenAI-compatible endpoint, and gateways in front of it) takes a
 * subset of JSON Schema and refuses the rest by name — "Unknown name
 * \"additionalProperties\" at 'tools[0].function_declarations[0].parameters'"
 * — at every request, so an agent whose tools use them (a docstring tool's
 * closed object, an MCP server's schema) could not call that model at all.
 * Learned from the refusal, such keywords are left out of what the model is
 * sent; the tools still check their arguments against the whole schema.
 */

/** The keywords a refusal names in a tool's schema (and their `$` form: Gemini names `$ref` "ref"). */
export function refusedSchemaKeywords(message: string): string[] {
  const named = new Set<string>();
  for (const match of message.matchAll(/Unknown name \\?"(\$?[A-Za-z_][\w]*)\\?" at '(?:request\.)?tools\[/g)) {
    named.add(match[1]);
    if (!match[1].startsWith('$')) named.add(`$${match[1]}`);
  }
  return [...named];
}

/** Keys whose value is a subschema, or an array of them. */
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'prefixItems', 'contains', 'if', 'then', 'else', 'propertyNames', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems']);
/** Keys whose value maps names (not keywords) to subschemas. */
const NAMED_SUBSCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** `schema` without `dropped` keywords at any depth; property names and data (enum, const, default) untouched. */
export function withoutKeywords(schema: unknown, dropped: ReadonlySet<string>): unknown {
  if (dropped.size === 0) return schema;
  if (Array.isArray(schema)) return schema.map((item) => withoutKeywords(item, dropped));
  if (schema === null || typeof schema !== 'object') return schema;
  // No prototype: a keyword or property named __proto__ stays a key.
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) {
    if (dropped.has(key)) continue;
    if (NAMED_SUBSCHEMAS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const named: Record<string, unknown> = Object.create(null);
      for (const [name, sub] of Object.entries(value)) named[name] = withoutKeywords(sub, dropped);
      out[key] = named;
    } else out[key] = SUBSCHEMA.has(key) ? withoutKeywords(value, dropped) : value;
  }
  return out;
}
