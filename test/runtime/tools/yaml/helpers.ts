/** YAML tools for tests: written as YAML text, loaded by the same reader the runtime uses, run by a real registry. */
import { parse, stringify } from 'yaml';
import { onFileEnd } from '../../../helpers/file-cleanup.ts';
import { ToolRegistry } from '../../../../runtime/tools/registry.ts';
import type { Tool } from '../../../../runtime/tools/model.ts';
import { readYamlTool } from '../../../../runtime/tools/yaml/read-definition.ts';
import { createYamlTool, yamlToolSpec, type CommandEvent } from '../../../../runtime/tools/yaml/yaml-tool.ts';
import type { ApprovalPolicy } from '../../../../runtime/guard/approval-policy.ts';

const registries: ToolRegistry[] = [];
onFileEnd(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
});

/** Loads a YAML tool from its text (or from data, stringified first); throws with the problems if it has errors. */
export function loadYamlTool(name: string, source: string | Record<string, unknown>, options: { workDir: string; onCommand?: (e: CommandEvent) => void; envPassthrough?: string[] }): Tool {
  const text = typeof source === 'string' ? source : stringify(source, { lineWidth: 0 });
  const { definition, problems } = readYamlTool(parse(text), name);
  if (!definition) throw new Error(`${name}: ${JSON.stringify(problems.items, null, 2)}`);
  return createYamlTool(yamlToolSpec(definition, undefined), definition, options);
}

export function yamlRegistry(
  workDir: string,
  tools: Record<string, string | Record<string, unknown>>,
  options: { extra?: Tool[]; approval?: ApprovalPolicy; onCommand?: (e: CommandEvent) => void; envPassthrough?: string[] } = {},
): ToolRegistry {
  const registry = new ToolRegistry({ workDir, approval: options.approval });
  registries.push(registry);
  for (const [name, source] of Object.entries(tools)) {
    const problem = registry.register(loadYamlTool(name, source, { workDir, onCommand: options.onCommand, envPassthrough: options.envPassthrough }), name);
    if (problem) throw new Error(problem.message);
  }
  for (const tool of options.extra ?? []) registry.register(tool, tool.name);
  return registry;
}

/** The problems a YAML tool text has (codes and messages), for tests of refusals. */
export function problemsOf(source: string | Record<string, unknown>, name = 'tool') {
  const text = typeof source === 'string' ? source : stringify(source, { lineWidth: 0 });
  return readYamlTool(parse(text), name).problems.items;
}
