/**
 * ajv's errors, rewritten as diagnostics a person can act on: the field by
 * name, its position in forge.yaml, and a hint ("did you mean ...?").
 */
import type { ErrorObject } from 'ajv';
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { didYouMean } from '../../runtime/suggest.ts';
import type { PathSegment, YamlSource } from './yaml-source.ts';

/** The file kinds whose schema problems have codes of their own. */
export type SchemaCodePrefix = 'FORGE_CONFIG' | 'FORGE_YAML';

/** `codePrefix` names the file kind in the codes: FORGE_CONFIG_UNKNOWN_FIELD (forge.yaml), FORGE_YAML_UNKNOWN_FIELD (a YAML tool). */
export function schemaErrorsToDiagnostics(errors: readonly ErrorObject[], source: YamlSource, data: unknown, codePrefix: SchemaCodePrefix = 'FORGE_CONFIG'): Diagnostic[] {
  const useful = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf');
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of useful.length ? useful : errors) {
    const d = toDiagnostic(e, source, data, codePrefix);
    const key = `${d.line}:${d.column}:${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

function toDiagnostic(e: ErrorObject, source: YamlSource, data: unknown, prefix: SchemaCodePrefix): Diagnostic {
  const path = pointerToPath(e.instancePath, data);
  const field = describePath(path);
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys((parent.properties as Record<string, unknown>) ?? {}).filter((k) => k !== '$schema');
      const where = field ? ` in ${field}` : '';
      return error(`${prefix}_UNKNOWN_FIELD`, `unknown field "${key}"${where}`, source.locate([...path, key], 'key'), didYouMean(key, known) ?? (known.length ? `known fields${where}: ${known.join(', ')}` : undefined));
    }
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      const full = describePath([...path, missing]);
      return error(`${prefix}_MISSING_FIELD`, `missing required field "${full}"`, source.locate(path, 'key'), hintForMissing(full));
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map(String);
      const value = String(valueAt(data, path));
      return error(`${prefix}_VALUE`, `"${field}" must be one of ${allowed.join(', ')} (got "${value}")`, source.locate(path), didYouMean(value, allowed));
    }
    case 'type': {
      const expected = (e.params as { type: string }).type;
      return error(`${prefix}_TYPE`, `"${field}" must be ${article(expected)} ${expected}`, source.locate(path), typeHint(expected, valueAt(data, path)));
    }
    case 'pattern': {
      const value = valueAt(data, path);
      return error(`${prefix}_VALUE`, `"${field}" has an invalid value "${String(value)}"`, source.locate(path), (parent['x-hint'] as string | undefined) ?? `must match ${(e.params as { pattern: string }).pattern}`);
    }
    default:
      return error(`${prefix}_VALUE`, `"${field || source.file}" ${e.message ?? 'is invalid'}`, source.locate(path), parent['x-hint'] as string | undefined);
  }
}

/** "/tools/2/config" → ['tools', 2, 'config'] (array indexes as numbers). */
export function pointerToPath(pointer: string, data: unknown): PathSegment[] {
  if (!pointer) return [];
  const out: PathSegment[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      out.push(Number(segment));
      node = node[Number(segment)];
    } else {
      out.push(segment);
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return out;
}

export function describePath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out ? `.${segment}` : segment;
  return out;
}

function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let node = data;
  for (const segment of path) node = node && typeof node === 'object' ? (node as Record<string | number, unknown>)[segment] : undefined;
  return node;
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** What to write instead, told by what was written (`got`): a mapping is not fixed the way a number is. */
function typeHint(expected: string, got: unknown): string | undefined {
  if (expected === 'string' && got !== null && typeof got === 'object') {
    return Array.isArray(got)
      ? 'YAML reads an unquoted [...] or "- item" lines as a list: write one string, quoting the whole value'
      : `YAML reads an unquoted {...} or "key: value" lines as a mapping: write one string, quoting the whole value, e.g. '{"a": {a.output}}'`;
  }
  switch (expected) {
    case 'array':
      return 'write a list, e.g. [a, b] or one "- item" per line';
    case 'object':
      return 'write a mapping of "key: value" lines, indented under this field';
    case 'string':
      return 'quote the value if YAML reads it as a number or boolean, e.g. "1.0"';
    default:
      return undefined;
  }
}

function hintForMissing(field: string): string | undefined {
  switch (field) {
    case 'agent_id':
      return 'add e.g. "agent_id: support-agent"';
    case 'version':
      return 'add e.g. "version: 0.1.0"';
    default:
      return undefined;
  }
}
