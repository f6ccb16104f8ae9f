/**
 * `parameters:` of a YAML tool → its input schema. Each parameter has a
 * type (string, number, integer, boolean, array, object), a description,
 * `required` and `default`, and optionally `enum` and `items`. As in the
 * docstring grammar, a parameter is required unless it says
 * `required: false` or has a default.
 */
import type { JSONSchema } from '../model.ts';
import type { PathSegment } from './definition.ts';
import { isRecord, type ProblemList } from './problems.ts';

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
/** What a parameter may be named (a docstring `Input:` line's names are read the same way). */
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const PARAMETER_FIELDS = new Set(['type', 'description', 'required', 'default', 'enum', 'items', 'flag', 'false-flag']);
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
    if (declared.default !== undefined) {
      if (!fitsType(declared.default, type as string)) {
        problems.error('FORGE_YAML_PARAMETER', `the default of parameter "${name}" is not ${/^[aeiou]/.test(type as string) ? 'an' : 'a'} ${type}`, [...at, 'default']);
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
