/**
 * A tool's result checked against the Output it declares. A mismatch is a
 * warning in the log (the caller still gets the value) unless forge.yaml
 * says `strict_outputs: true`: then the call fails with FORGE_TOOL_OUTPUT,
 * so an agent never builds on a value its tool promised to be otherwise.
 */
import type { ErrorObject } from 'ajv';
import { fail, type Logger, type ToolResult, type ToolSpec } from './model.ts';
import { compileSchema } from './validation.ts';

export function checkOutput(tool: ToolSpec, result: ToolResult, options: { strict: boolean; log: Logger }): ToolResult {
  if (!result.ok || !tool.outputSchema) return result;
  let validate;
  try {
    validate = compileSchema(tool.outputSchema);
  } catch {
    return result; // a schema that does not compile is the build's schema check's to report
  }
  // The validator fills in defaults: it works on a copy, the caller gets the value as returned.
  if (validate(structuredClone(result.value))) return result;
  const problems = [...new Set((validate.errors ?? []).map(describeOutputError))].join('; ');
  const message = `tool "${tool.name}" returned output that does not match its declared Output: ${problems}`;
  if (options.strict) return fail('FORGE_TOOL_OUTPUT', message, 'return what the Output section declares, or change the declaration (strict_outputs: true in forge.yaml)');
  options.log.warn(message);
  return result;
}

function describeOutputError(e: ErrorObject): string {
  const field = e.instancePath.slice(1).replace(/\//g, '.');
  if (e.keyword === 'required') return `missing "${field ? `${field}.` : ''}${(e.params as { missingProperty: string }).missingProperty}"`;
  return `${field ? `"${field}"` : 'the result'} ${e.message}`;
}
