/**
 * The names a forged tool's inputs may have: the names a project tool's
 * parameters may have (docstring `Input:` lines and YAML `parameters:`),
 * so that `forge tool promote` can write every input as one line of its
 * docstring. A name holding a newline or a colon would otherwise be read
 * there as fields of its own (`Composed Of:`, `Tags:`).
 */
import type { JSONSchema } from '../model.ts';
import { PARAMETER_NAME } from '../yaml/parameters.ts';

/** The property names of an input schema that are not parameter names. */
export function invalidInputNames(schema: JSONSchema): string[] {
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object' || Array.isArray(properties)) return [];
  return Object.keys(properties).filter((name) => !PARAMETER_NAME.test(name));
}
