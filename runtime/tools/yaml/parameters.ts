/**
 * `parameters:` of a YAML tool → its input schema. Each parameter has a
 * type (string, number, integer, boolean, array, object), a description,
 * `required` and `default`, and optionally `enum`, `items`, a string's
 * `pattern` and a number's `minimum` and `maximum`. As in the
 * docstring grammar, a parameter is required unless it says
 * `required: false` or has a default.
 */
import type { JSONSchema } from '../model.ts';
import type { PathSegment } from './definition.ts';
import { isRecord, type ProblemList } from './problems.ts';
import { schemaRegExp, unprotectedPattern } from '../../regexp-safety.ts';

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
/** What a parameter may be named (a docstring `Input:` line's names are read the same way). */
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const PARAMETER_FIELDS = new Set(['type', 'description', 'required', 'default', 'enum', 'items', 'pattern', 'minimum', 'maximum', 'flag', 'false-flag']);
/** A flag is written into commands as is: letters, digits and - _ = . , : / only. */
const FLAG_PATTERN = /^[A-Za-z0-9_=.,:/+-]*$/;
/** `{input}` is every argument at once, so no single parameter may take the name. */
const RESERVED_NAMES = new Set(['input']);

export function readParameters(value: unknown, path: PathSegment[], problems: ProblemList): { schema: JSONSchema; names: string[]; flags: Record<string, { on: string; off: string }> } {
  const properties: Record<string, JSONSchema> = {};
  const flags: Record<string, { on: string; off: string }> = {};
  const required: string[] = [];
  if (value !== undefined && !isRecord(value)) {
    problems.error('FORGE_YAML_TYPE', '"parameters" must be a mapping of parameter names to their declarations', path);
  }
  for (const [name, raw] of Object.entries(isRecord(value) ? value : {})) {
    const at = [...path, name];
    if (!PARAMETER_NAME.test(name)) {
      problems.error('FORGE_YAML_PARAMETER', `parameter name "${name}" must start with a letter and hold only letters, digits, "_" and "-"`, at, { at: 'key' });
      continue;
    }
    if (name === '__proto__') {
      // JSON Schema validators (ajv) skip a property of that name: it could be neither checked nor passed.
      problems.error('FORGE_YAML_PARAMETER', 'a parameter cannot be named "__proto__"', at, { at: 'key', hint: 'choose another name, such as proto' });
      continue;
    }
    if (RESERVED_NAMES.has(name)) {
      problems.error('FORGE_YAML_PARAMETER', `"${name}" is reserved: {input} stands for all the arguments at once`, at, { at: 'key', hint: 'choose another name, such as text or data' });
      continue;
    }
    const declared = isRecord(raw) ? raw : { type: raw };
    for (const key of Object.keys(declared)) {
      if (!PARAMETER_FIELDS.has(key)) problems.error('FORGE_YAML_FIELD', `unknown parameter field "${key}"`, [...at, key], { at: 'key', hint: `fields: ${[...PARAMETER_FIELDS].join(', ')}` });
    }
    const type = declared.type ?? 'string';
    if (!PARAMETER_TYPES.includes(type as (typeof PARAMETER_TYPES)[number])) {
      problems.error('FORGE_YAML_PARAMETER', `parameter "${name}" has unknown type ${JSON.stringify(type)}`, [...at, 'type'], { hint: `types: ${PARAMETER_TYPES.join(', ')}` });
      continue;
    }
    const schema: JSONSchema = { type };
    if (typeof declared.description === 'string' && declared.description.trim()) schema.description = declared.description.trim();
    if (type === 'array') {
      const items = declared.items;
      if (typeof items === 'string') schema.items = { type: items };
      else if (isRecord(items)) schema.items = items;
    }
    if (declared.enum !== undefined) {
      if (Array.isArray(declared.enum) && declared.enum.length > 0) schema.enum = declared.enum;
      else problems.error('FORGE_YAML_PARAMETER', `"enum" of parameter "${name}" must be a list of the allowed values`, [...at, 'enum']);
    }
    const bounds = readBounds(name, declared, type as string, at, problems);
    Object.assign(schema, bounds.schema);
    if (declared.default !== undefined) {
      if (!fitsType(declared.default, type as string)) {
        problems.error('FORGE_YAML_PARAMETER', `the default of parameter "${name}" is not ${/^[aeiou]/.test(type as string) ? 'an' : 'a'} ${type}`, [...at, 'default']);
      } else if (bounds.refuses(declared.default)) {
        problems.error('FORGE_YAML_PARAMETER', `the default of parameter "${name}" ${bounds.refuses(declared.default)}`, [...at, 'default']);
      } else schema.default = declared.default;
    }
    if (declared.required !== undefined && typeof declared.required !== 'boolean') {
      problems.error('FORGE_YAML_TYPE', '"required" must be true or false', [...at, 'required']);
    }
    const isRequired = declared.required === true || (declared.required === undefined && declared.default === undefined);
    if (declared.required === true && declared.default !== undefined) {
      problems.warning('FORGE_YAML_PARAMETER', `parameter "${name}" is required and has a default; the default is never used`, [...at, 'default']);
    }
    if (declared.flag !== undefined || declared['false-flag'] !== undefined) {
      const on = declared.flag ?? '';
      const off = declared['false-flag'] ?? '';
      if (type !== 'boolean') problems.error('FORGE_YAML_PARAMETER', `"flag" goes with a boolean parameter; "${name}" is ${String(type)}`, [...at, declared.flag !== undefined ? 'flag' : 'false-flag'], { at: 'key' });
      else if (typeof on !== 'string' || typeof off !== 'string' || !FLAG_PATTERN.test(on) || !FLAG_PATTERN.test(off)) {
        problems.error('FORGE_YAML_PARAMETER', `the flags of "${name}" must be words such as -w or --whole-word`, [...at, declared.flag !== undefined ? 'flag' : 'false-flag'], { hint: 'letters, digits and - _ = . , : / +' });
      } else flags[name] = { on, off };
    }
    properties[name] = schema;
    if (isRequired) required.push(name);
  }
  const schema: JSONSchema = { type: 'object', properties };
  if (required.length) schema.required = required;
  schema.additionalProperties = false;
  return { schema, names: Object.keys(properties), flags };
}

/**
 * A string's `pattern` and a number's `minimum` and `maximum`: what the callers' values are checked
 * against before anything runs (a value the program would read as its own kind of operand, `CC=...`
 * for `make {target}`, is kept out by a pattern). The pattern runs on the agent's thread against any
 * caller's value, so it must be one V8's linear-time engine can take over: no lookaround or
 * backreference (regexp-safety.ts).
 */
function readBounds(name: string, declared: Record<string, unknown>, type: string, at: PathSegment[], problems: ProblemList): { schema: JSONSchema; refuses: (value: unknown) => string | undefined } {
  const schema: JSONSchema = {};
  const checks: ((value: unknown) => string | undefined)[] = [];
  if (declared.pattern !== undefined) {
    const pattern = declared.pattern;
    const regexp = typeof pattern === 'string' ? compiles(pattern) : undefined;
    const unsafe = typeof pattern === 'string' ? unprotectedPattern(pattern) : undefined;
    if (type !== 'string') problems.error('FORGE_YAML_PARAMETER', `"pattern" goes with a string parameter; "${name}" is ${type}`, [...at, 'pattern'], { at: 'key', hint: 'for a list of strings, give items: a pattern' });
    else if (typeof pattern !== 'string') problems.error('FORGE_YAML_PARAMETER', `the pattern of "${name}" must be a regular expression, written as a string`, [...at, 'pattern']);
    else if (!regexp) problems.error('FORGE_YAML_PARAMETER', `the pattern of "${name}" is not a regular expression: ${JSON.stringify(pattern)}`, [...at, 'pattern'], { hint: 'JavaScript regular expression syntax, without the slashes' });
    else if (unsafe) {
      problems.error('FORGE_YAML_PARAMETER', `the pattern of "${name}" uses ${unsafe}, which only the backtracking regexp engine runs: a caller's value could hold the agent's one thread for as long as it backtracks`, [...at, 'pattern'], { hint: 'write it without lookarounds and backreferences, or check the value in the script' });
    } else {
      schema.pattern = pattern;
      checks.push((value) => (typeof value === 'string' && !regexp.test(value) ? `does not match its pattern ${JSON.stringify(pattern)}` : undefined));
    }
  }
  for (const key of ['minimum', 'maximum'] as const) {
    const bound = declared[key];
    if (bound === undefined) continue;
    if (type !== 'number' && type !== 'integer') problems.error('FORGE_YAML_PARAMETER', `"${key}" goes with a number or integer parameter; "${name}" is ${type}`, [...at, key], { at: 'key' });
    else if (typeof bound !== 'number' || !Number.isFinite(bound)) problems.error('FORGE_YAML_PARAMETER', `the ${key} of "${name}" must be a number`, [...at, key]);
    else {
      schema[key] = bound;
      checks.push((value) => (typeof value === 'number' && (key === 'minimum' ? value < bound : value > bound) ? `is ${key === 'minimum' ? 'below its minimum' : 'above its maximum'} ${bound}` : undefined));
    }
  }
  if (typeof schema.minimum === 'number' && typeof schema.maximum === 'number' && schema.minimum > schema.maximum) {
    problems.error('FORGE_YAML_PARAMETER', `the minimum of "${name}" (${schema.minimum}) is above its maximum (${schema.maximum}): no value fits`, [...at, 'minimum']);
  }
  return { schema, refuses: (value) => checks.map((check) => check(value)).find((why) => why !== undefined) };
}

/** `pattern` as ajv compiles it (schemaRegExp, with the u flag ajv asks for), or undefined when it does not compile. */
function compiles(pattern: string): RegExp | undefined {
  try {
    return schemaRegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

export function fitsType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    default:
      return isRecord(value);
  }
}
