/**
 * Stage: check schemas. Compiles every tool's input and output schema with
 * ajv, so a schema that cannot validate anything fails the build instead of
 * the first call. Input schemas must describe an object: that is what every
 * LLM provider sends as arguments.
 */
import { error } from '../runtime/diagnostics.ts';
import { schemaProblem } from '../runtime/tools/validation.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export function checkSchemas(tools: readonly ProjectTool[], ctx: StageContext): void {
  for (const { spec, at } of tools) {
    if (spec.inputSchema.type !== 'object') {
      ctx.report(error('FORGE_SCHEMA_INVALID', `tool "${spec.name}": its input schema must have type "object"`, at));
    }
    for (const [which, schema] of [['input', spec.inputSchema], ['output', spec.outputSchema]] as const) {
      if (!schema) continue;
      const problem = schemaProblem(schema);
      if (problem) ctx.report(error('FORGE_SCHEMA_INVALID', `tool "${spec.name}": its ${which} schema does not compile: ${problem}`, at));
    }
  }
}
