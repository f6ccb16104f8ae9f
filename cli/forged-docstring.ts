/**
 * A forged tool's schemas as the `Input:` and `Output:` lines of a
 * JavaScript tool's docstring (README "Writing tools"): as much of the
 * contract as the docstring grammar can say — enum(a|b), list[T],
 * dict[str, T], Optional[T], default=VALUE — and the plain type where it
 * cannot (a nested object's properties become `dict`). Every line is read
 * back with the docstring parser before it is written: a value the grammar
 * would misread (an enum value holding "|", a default holding ",") is left
 * out rather than written wrong. The schemas themselves stay in
 * NAME.tests.json.
 */
import { extractScriptDocstring } from '../runtime/tools/custom/docstring-source.ts';
import { parseDocstring } from '../runtime/tools/custom/docstring.ts';
import type { JSONSchema } from '../runtime/tools/model.ts';
import { PARAMETER_NAME } from '../runtime/tools/yaml/parameters.ts';
import { ownValue } from '../runtime/own-value.ts';
import { isRecord } from '../runtime/is-record.ts';

type Section = 'Input' | 'Output';

const SCALARS: Record<string, string> = { string: 'str', integer: 'int', number: 'float', boolean: 'bool' };

/** The docstring lines of one section (without the heading), or none when the schema has no properties. */
export function sectionLines(schema: JSONSchema | undefined, section: Section): string[] {
  const properties = isRecord(schema?.properties) ? schema.properties : {};
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]) : [];
  return Object.entries(properties).map(([name, raw]) => {
    // Names were checked when the tool was forged (input-names.ts); the promote command refuses others.
    if (!PARAMETER_NAME.test(name)) throw new Error(`"${name}" is not a parameter name`);
    return parameterLine(name, isRecord(raw) ? raw : {}, required.includes(name), section);
  });
}

/** The richest line the parser reads back as `schema` says, falling back to plainer ones. */
function parameterLine(name: string, schema: JSONSchema, required: boolean, section: Section): string {
  const description = docText(typeof schema.description === 'string' ? schema.description : '');
  const candidates: { type: string; withDefault: boolean }[] = [];
  for (const type of [...new Set([typeText(schema), plainTypeText(schema), 'any'])]) {
    if (schema.default !== undefined) candidates.push({ type, withDefault: true });
    candidates.push({ type, withDefault: false });
  }
  for (const { type, withDefault } of candidates) {
    const nullable = type.startsWith('Optional[');
    const options = [type];
    if (withDefault) options.push(`default=${defaultText(schema.default)}`);
    else if (required && nullable) options.push('required');
    else if (!required && !nullable) options.push('optional');
    const line = `${name} (${options.join(', ')})${description ? `: ${description}` : ''}`;
    if (readsBackAs(line, name, section, withDefault ? schema.default : undefined, schema.enum)) return line;
  }
  return `${name} (any${required ? '' : ', optional'})`;
}

/** The docstring type for a schema: Optional[T] for T-or-null at the top, as the grammar allows nowhere else. */
function typeText(schema: JSONSchema): string {
  const types = Array.isArray(schema.type) ? schema.type : undefined;
  if (types && types.length === 2 && types[1] === 'null') {
    const enumValues = Array.isArray(schema.enum) ? schema.enum.filter((v) => v !== null) : undefined;
    return `Optional[${innerType({ ...schema, type: types[0], ...(enumValues ? { enum: enumValues } : {}) })}]`;
  }
  return innerType(schema);
}

function innerType(schema: JSONSchema): string {
  if (Array.isArray(schema.enum) && schema.enum.length && schema.enum.every((v) => typeof v === 'string' || typeof v === 'number')) {
    return `enum(${schema.enum.join('|')})`;
  }
  if (schema.type === 'array') {
    const items = isRecord(schema.items) ? innerType(schema.items) : 'any';
    return items === 'any' ? 'list' : `list[${items}]`;
  }
  if (schema.type === 'object') {
    const values = isRecord(schema.additionalProperties) && !isRecord(schema.properties) ? innerType(schema.additionalProperties) : 'any';
    return values === 'any' ? 'dict' : `dict[str, ${values}]`;
  }
  return ownValue(SCALARS, String(schema.type)) ?? 'any';
}

/** The type without what the parser may misread (enum values, item types). */
function plainTypeText(schema: JSONSchema): string {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return ownValue(SCALARS, String(type)) ?? ownValue({ array: 'list', object: 'dict' }, String(type)) ?? 'any';
}

function defaultText(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/**
 * Prose fit for the one line after the type: whitespace (a newline would
 * start a field of its own) made one space, the comment's end broken up,
 * and "Default:" reworded (the parser would take what follows as a default).
 */
export function docText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\*\//g, '* /')
    .replace(/\bDefault:/gi, (word) => `${word.slice(0, -1)} is`)
    .trim();
}

/** Whether the parser reads `line` back with this default and enum and no problem. */
function readsBackAs(line: string, name: string, section: Section, dflt: unknown, enumValues: unknown): boolean {
  // A line break or the comment's end in a value would break the file itself, not only the line.
  if (/\*\/|[\r\n\u2028\u2029]/.test(line)) return false;
  const source = `/**\n * Tool: probe\n * Description: probe\n *\n * ${section}:\n *   ${line}\n */\n`;
  const extracted = extractScriptDocstring(source);
  if (extracted.kind !== 'found') return false;
  const { tool, diagnostics } = parseDocstring(extracted.docstring, 'probe.js');
  if (!tool || diagnostics.length) return false;
  const properties = (section === 'Input' ? tool.inputSchema : tool.outputSchema)?.properties as Record<string, JSONSchema> | undefined;
  const parsed = properties?.[name];
  if (!parsed) return false;
  if (dflt !== undefined && JSON.stringify(parsed.default) !== JSON.stringify(dflt)) return false;
  if (Array.isArray(parsed.enum) && JSON.stringify(parsed.enum.filter((v) => v !== null)) !== JSON.stringify((enumValues as unknown[] | undefined)?.filter((v) => v !== null))) return false;
  return true;
}

