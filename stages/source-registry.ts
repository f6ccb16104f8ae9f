/**
 * A registry of a project's tools run straight from sources (no build):
 * what `forge tool run` and `forge run` use. Specs and code come from the
 * same stages the build runs.
 */
import { isAbsolute, join } from 'node:path';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createRegistry, type RegistryBuild } from '../runtime/tools/create-tools.ts';
import type { Logger } from '../runtime/tools/model.ts';
import type { Project } from './load-project.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export function createSourceRegistry(project: Project, options: { log?: Logger } = {}): RegistryBuild {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const origins = new Map(project.tools.map((t) => [t.spec.name, t.origin]));
  return createRegistry(
    project.tools.map((t) => t.spec),
    {
      builtins,
      log: options.log,
      schedules: config.schedules,
      agentConfig: describeConfig(project),
      custom: {
        workDir: config.workDir,
        envPassthrough: config.envPassthrough,
        resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
        node: createSourceNodeLauncher(config.root),
      },
    },
    (spec) => origins.get(spec.name) ?? spec.name,
  );
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
