/**
 * `--param K=V` values are text; the tool's input schema says what they
 * should be. "3" becomes 3 for an int, "a,b" becomes ["a","b"] for a list.
 */
import type { JSONSchema } from '../runtime/tools/model.ts';
import { UsageError } from './usage-error.ts';
import { withoutNull } from '../runtime/tools/custom/param-types.ts';
import { ownValue } from '../runtime/own-value.ts';

export function parseParams(params: readonly string[], schema: JSONSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
  // Entries, not assignments: --param __proto__=x is an argument (that the tool's schema refuses), not a prototype.
  return Object.fromEntries(
    params.map((param) => {
      const eq = param.indexOf('=');
      if (eq <= 0) throw new UsageError(`--param "${param}" must look like NAME=VALUE`);
      const name = param.slice(0, eq);
      return [name, coerce(name, param.slice(eq + 1), ownValue(properties, name))];
    }),
  );
}

function coerce(name: string, text: string, schema: JSONSchema | undefined): unknown {
  // Optional[T]: null, or a T.
  const notNull = schema && withoutNull(schema);
  if (notNull) return text === 'null' ? null : coerce(name, text, notNull);
  const type = schema?.type;
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      const what = type === 'integer' ? 'a whole number' : 'a number';
      if (text.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) throw new UsageError(`--param ${name} must be ${what}, got "${text}"`);
      return n;
    }
    case 'boolean':
      if (/^(true|yes|1)$/i.test(text)) return true;
      if (/^(false|no|0)$/i.test(text)) return false;
      throw new UsageError(`--param ${name} must be true or false, got "${text}"`);
    case 'array':
      if (text.trim().startsWith('[')) return json(name, text);
      return text === '' ? [] : text.split(',').map((item) => coerce(name, item.trim(), schema?.items as JSONSchema | undefined));
    case 'object':
      return json(name, text);
    case 'string':
      return text;
    default:
      // No declared type (or unknown parameter): JSON if it parses, text otherwise.
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
  }
}

function json(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--param ${name} is not valid JSON: ${(err as Error).message}`);
  }
}
