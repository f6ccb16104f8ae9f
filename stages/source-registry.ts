/**
 * A registry of a project's tools run straight from sources (no build):
 * what `forge tool run` and `forge run` use. Specs and code come from the
 * same stages the build runs.
 */
import { isAbsolute, join } from 'node:path';
import { HttpClient } from '../runtime/net/http-client.ts';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createRegistry, createTool, type RegistryBuild, type ToolFactories } from '../runtime/tools/create-tools.ts';
import type { Logger, Tool, ToolSpec } from '../runtime/tools/model.ts';
import type { Project } from './load-project.ts';
import type { ProjectTool } from './project-tool.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export interface SourceRegistryOptions {
  log?: Logger;
  http?: HttpClient;
  /** The tools to register (default: all of the project's, dev tools included). */
  tools?: readonly ProjectTool[];
}

export function sourceToolFactories(project: Project, options: SourceRegistryOptions = {}): ToolFactories {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  return {
    builtins,
    log: options.log,
    http: options.http ?? new HttpClient(),
    schedules: config.schedules,
    agentConfig: describeConfig(project),
    custom: {
      workDir: config.workDir,
      envPassthrough: config.envPassthrough,
      resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
      node: createSourceNodeLauncher(config.root),
    },
  };
}

export function createSourceRegistry(project: Project, options: SourceRegistryOptions = {}): RegistryBuild {
  const tools = options.tools ?? project.tools;
  const origins = new Map(tools.map((t) => [t.spec.name, t.origin]));
  return createRegistry(
    tools.map((t) => t.spec),
    sourceToolFactories(project, options),
    (spec) => origins.get(spec.name) ?? spec.name,
  );
}

/** A running tool for one spec of the project (hot reload makes them one by one). */
export function createSourceTool(spec: ToolSpec, factories: ToolFactories): Tool {
  return createTool(spec, factories);
}

/** What debug_console shows as the config of an agent run from sources: forge.yaml as resolved. */
function describeConfig({ config }: Project): Record<string, unknown> {
  return {
    agent_id: config.agentId,
    version: config.version,
    description: config.description,
    model: config.model,
    workdir: config.workDir,
    tool_dirs: config.toolDirs.map((d) => d.path),
    tools: config.tools.map((t) => (t.config ? { name: t.name, config: t.config } : t.name)),
    env_passthrough: config.envPassthrough,
    egress: config.egress,
    approval: config.approval,
    schedules: config.schedules,
  };
}
