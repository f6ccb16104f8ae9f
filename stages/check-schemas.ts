/**
 * Stage: check schemas. A schema that cannot validate anything must fail the
 * build, not the first call. Input schemas must describe an object: that is
 * what every LLM provider sends as arguments.
 *
 * Schemas that come from outside Forge (an MCP server, an OpenAPI document)
 * are checked against the JSON Schema meta-schema and compiled by ajv.
 * Schemas Forge wrote itself are not compiled again on every build: those
 * generated from docstrings come from a closed grammar whose every construct
 * the parser's tests compile, and the builtin tools' schemas are compiled by
 * the catalog's tests. Compiling costs about 0.7 ms a schema in a fresh
 * process — most of a cold build of a project with a few hundred tools.
 */
import { error } from '../runtime/diagnostics.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export async function checkSchemas(tools: readonly ProjectTool[], ctx: StageContext): Promise<void> {
  // ajv loads only when there is a schema to compile (and, in a build, while esbuild works).
  const { schemaProblem } = tools.some((t) => t.schemaOrigin === 'external') ? await import('../runtime/tools/validation.ts') : { schemaProblem: () => undefined };
  for (const tool of tools) {
    const { spec, at } = tool;
    if (spec.inputSchema.type !== 'object') {
      ctx.report(error('FORGE_SCHEMA_INVALID', `tool "${spec.name}": its input schema must have type "object"`, at));
    }
    if (tool.schemaOrigin !== 'external') continue;
    for (const [which, schema] of [['input', spec.inputSchema], ['output', spec.outputSchema]] as const) {
      if (!schema) continue;
      const problem = schemaProblem(schema);
      if (problem) ctx.report(error('FORGE_SCHEMA_INVALID', `tool "${spec.name}": its ${which} schema is not valid: ${problem}`, at));
    }
  }
}
