/** JSON Schema shown the way the docstring grammar writes it: `units  str  optional  default "metric"  ...`. */
import type { JSONSchema } from '../runtime/tools/model.ts';
import { withoutNull } from '../runtime/tools/custom/param-types.ts';

export function typeName(schema: JSONSchema): string {
  const notNull = withoutNull(schema);
  if (notNull) return `Optional[${typeName(notNull)}]`;
  if (Array.isArray(schema.enum)) return `enum(${(schema.enum as unknown[]).map(String).join('|')})`;
  switch (schema.type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'array':
      return schema.items ? `list[${typeName(schema.items as JSONSchema)}]` : 'list';
    case 'object':
      return schema.additionalProperties && typeof schema.additionalProperties === 'object' ? `dict[str, ${typeName(schema.additionalProperties as JSONSchema)}]` : 'dict';
    case undefined:
      return 'any';
    default:
      return Array.isArray(schema.type) ? (schema.type as string[]).join('|') : String(schema.type);
  }
}

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  defaultValue?: unknown;
  /** What values it takes besides its type: `matches ^[a-z]+$`, `1 to 8`, `at least 0`. */
  limits?: string;
  description: string;
}

export function fieldRows(schema: JSONSchema | undefined): FieldRow[] {
  const properties = (schema?.properties ?? {}) as Record<string, JSONSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, prop]) => ({
    name,
    type: typeName(prop),
    required: required.has(name),
    ...('default' in prop ? { defaultValue: prop.default } : {}),
    ...(limitsOf(prop) ? { limits: limitsOf(prop) } : {}),
    description: String(prop.description ?? ''),
  }));
}

/** A string's pattern and a number's bounds, in words; undefined when it has neither. */
function limitsOf(prop: JSONSchema): string | undefined {
  const min = typeof prop.minimum === 'number' ? prop.minimum : undefined;
  const max = typeof prop.maximum === 'number' ? prop.maximum : undefined;
  const bounds = min !== undefined && max !== undefined ? `${min} to ${max}` : min !== undefined ? `at least ${min}` : max !== undefined ? `at most ${max}` : undefined;
  const parts = [typeof prop.pattern === 'string' ? `matches ${prop.pattern}` : undefined, bounds].filter((p) => p !== undefined);
  return parts.length ? parts.join(', ') : undefined;
}

export function renderFields(rows: readonly FieldRow[], indent = '    '): string {
  if (rows.length === 0) return `${indent}(none)`;
  const nameWidth = Math.max(...rows.map((r) => r.name.length));
  const typeWidth = Math.max(...rows.map((r) => r.type.length));
  return rows
    .map((r) => {
      const flags = r.required ? 'required' : 'optional';
      const dflt = r.defaultValue !== undefined ? ` default ${JSON.stringify(r.defaultValue)}` : '';
      const limits = r.limits ? `  ${r.limits}` : '';
      const head = `${indent}${r.name.padEnd(nameWidth)}  ${r.type.padEnd(typeWidth)}  ${flags}${dflt}${limits}`;
      return r.description ? `${head}\n${indent}  ${r.description}` : head;
    })
    .join('\n');
}
