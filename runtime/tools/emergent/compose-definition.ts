/**
 * A composition forge_tool was asked for, as a YAML meta-tool definition:
 * the engine Forge already has (templates, steps, output) reads it, so a
 * forged composition runs exactly like a YAML tool of the project, and
 * `forge tool promote` can write it out as one.
 */
import { isRecord } from '../yaml/problems.ts';
import { readYamlTool } from '../yaml/read-definition.ts';
import type { YamlToolDefinition } from '../yaml/definition.ts';
import { fitsType, PARAMETER_TYPES } from '../yaml/parameters.ts';
import type { ForgeRequest } from './forge-request.ts';

/**
 * A composition only calls tools, and each of its calls goes through the
 * approval policy as the tool it names: the composition itself is read.
 * The live forged tool and the promoted YAML tool carry the same tags, so
 * promoting one does not change what a call to it needs.
 */
export const COMPOSITION_TAGS: readonly string[] = ['read', 'forged'];

/** The YAML tool document for a compose request (what promote writes to tools/NAME.yaml). */
export function composeDocument(request: ForgeRequest): Record<string, unknown> {
  if (request.implementation.mode !== 'compose') throw new Error('not a composition');
  const properties = isRecord(request.inputSchema.properties) ? request.inputSchema.properties : {};
  const required = Array.isArray(request.inputSchema.required) ? (request.inputSchema.required as string[]) : [];
  const parameters: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(properties)) {
    const schema = isRecord(raw) ? raw : {};
    const type = PARAMETER_TYPES.includes(schema.type as (typeof PARAMETER_TYPES)[number]) ? schema.type : 'object';
    parameters[name] = {
      type,
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
      // What YAML parameters can say of the contract besides the type (readParameters checks them).
      ...(Array.isArray(schema.enum) && schema.enum.length ? { enum: schema.enum } : {}),
      ...(type === 'array' && isRecord(schema.items) ? { items: schema.items } : {}),
      // A required parameter's default is never used (YAML warns), and one of another type YAML refuses:
      // a tool forged before this was written must still load, so neither is passed on.
      ...(schema.default !== undefined && !required.includes(name) && fitsType(schema.default, String(type)) ? { default: schema.default } : {}),
      ...(required.includes(name) ? {} : { required: false }),
    };
  }
  const { steps, output } = request.implementation;
  return {
    name: request.name,
    description: request.description,
    tags: [...COMPOSITION_TAGS],
    parameters,
    steps: steps.map((step, i) => ({
      name: `step${i + 1}`,
      tool: step.tool,
      ...(step.args ? { args: step.args } : {}),
      ...(step.output_var ? { output_var: step.output_var } : {}),
    })),
    ...(output ? { output } : {}),
  };
}

/** The checked definition, or the problems the YAML engine found, as messages. */
export function composeDefinition(request: ForgeRequest): { definition?: YamlToolDefinition; problems: string[] } {
  const { definition, problems } = readYamlTool(composeDocument(request), request.name);
  const errors = problems.items.filter((p) => p.severity === 'error').map((p) => `${requestPath(p.path)}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`);
  if (!definition || errors.length) return { problems: errors };
  // The request's own schema is the contract (the YAML parameters only name the placeholders).
  return { definition: { ...definition, inputSchema: request.inputSchema }, problems: [] };
}

/** Where a path into the YAML document is in the forge request: implementation.steps[0].args. */
export function requestPath(path: (string | number)[]): string {
  if (path[0] === 'steps' && typeof path[1] === 'number') return [`implementation.steps[${path[1]}]`, ...path.slice(2)].join('.');
  return path.length ? `implementation.${path.join('.')}` : 'implementation';
}
