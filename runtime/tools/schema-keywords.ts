/**
 * Where a JSON Schema holds other schemas: what a walk that changes schema
 * keywords (external-schema.ts, local-schema.ts) steps into, and nothing
 * else — a `default`, `const`, `enum` or `examples` is data, which may well
 * have a field named "pattern" that is not one.
 */

/** Keywords whose value is a map of names to schemas (`dependencies`: to a schema or a list of names). */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/** Keywords whose value is a schema or a list of schemas. */
export const SCHEMA_VALUES: ReadonlySet<string> = new Set(['items', 'additionalItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'allOf', 'anyOf', 'oneOf', 'prefixItems']);
