/**
 * A tool's result checked against the Output it declares. A mismatch is a
 * warning in the log (the caller still gets the value) unless forge.yaml
 * says `strict_outputs: true`: then the call fails with FORGE_TOOL_OUTPUT,
 * so an agent never builds on a value its tool promised to be otherwise.
 */
import type { ErrorObject } from 'ajv';
import { fail, type Logger, type ToolResult, type ToolSpec } from './model.ts';
import { exactNumber } from './exact-output.ts';
import { compileSchema, TOO_COSTLY_KEYWORD, typeWords } from './validation.ts';
import { checkedOutputSchema } from './local-schema.ts';

export function checkOutput(tool: ToolSpec, result: ToolResult, options: { strict: boolean; log: Logger }): ToolResult {
  if (!result.ok) return result;
  const schema = checkedOutputSchema(tool);
  if (!schema) return result;
  let validate;
  try {
    validate = compileSchema(schema);
  } catch {
    return result; // a schema that does not compile is the build's schema check's to report
  }
  // The validator fills in defaults: it works on a copy, the caller gets the value as returned.
  const copy = structuredClone(result.value);
  if (validate(copy)) return result;
  const errors = (validate.errors ?? []).filter((e) => !isExactNumberText(e, copy));
  if (errors.length === 0) return result;
  const problems = [...new Set(errors.map(describeOutputError))].join('; ');
  const message = `tool "${tool.name}" returned output that does not match its declared Output: ${problems}`;
  if (options.strict) return fail('FORGE_TOOL_OUTPUT', message, 'return what the Output section declares, or change the declaration (strict_outputs: true in forge.yaml)');
  options.log.warn(message);
  return result;
}

/**
 * A number a double would change (2^64, -0, 0.10000000000000000001) reaches
 * the result as its text (exact-output.ts): where the Output declares a
 * number or an integer, that text is the number it declares, not a string.
 */
function isExactNumberText(e: ErrorObject, value: unknown): boolean {
  if (e.keyword !== 'type') return false;
  const expected = [(e.params as { type: string | string[] }).type].flat();
  const text = valueAt(value, e.instancePath);
  if (typeof text !== 'string' || !JSON_NUMBER.test(text) || exactNumber(text) !== text) return false;
  return expected.includes('number') || (expected.includes('integer') && /^-?\d+$/.test(text));
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function valueAt(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), value);
}

function describeOutputError(e: ErrorObject): string {
  if (e.keyword === TOO_COSTLY_KEYWORD) return e.message!; // already a sentence for the caller
  const field = e.instancePath.slice(1).replace(/\//g, '.');
  if (e.keyword === 'required') return `missing "${field ? `${field}.` : ''}${(e.params as { missingProperty: string }).missingProperty}"`;
  const problem = e.keyword === 'type' ? `must be ${typeWords((e.params as { type: string | string[] }).type)}` : e.message;
  return `${field ? `"${field}"` : 'the result'} ${problem}`;
}
