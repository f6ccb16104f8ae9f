/**
 * A registry of a project's tools run straight from sources (no build):
 * what `forge tool run` and `forge run` use. Specs and code come from the
 * same stages the build runs.
 */
import { isAbsolute, join } from 'node:path';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createRegistry, type RegistryBuild } from '../runtime/tools/create-tools.ts';
import type { ApprovalPolicy } from '../runtime/guard/approval-policy.ts';
import type { Logger } from '../runtime/tools/model.ts';
import { createYamlToolFactory } from '../runtime/tools/yaml/load-yaml-tool.ts';
import type { CommandEvent } from '../runtime/tools/yaml/yaml-tool.ts';
import type { Project } from './load-project.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export interface SourceRegistryOptions {
  log?: Logger;
  /** The approval policy calls go through (forge.yaml's approval: plus the command line's rules). */
  approval?: ApprovalPolicy;
  /** Sees every command a YAML tool runs, just before it runs (--show-command). */
  onCommand?: (event: CommandEvent) => void;
}

export function createSourceRegistry(project: Project, options: SourceRegistryOptions = {}): RegistryBuild {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const origins = new Map(project.tools.map((t) => [t.spec.name, t.origin]));
  return createRegistry(
    project.tools.filter((t) => !t.unavailable).map((t) => t.spec),
    {
      builtins,
      log: options.log,
      approval: options.approval,
      yaml: createYamlToolFactory({ workDir: config.workDir, envPassthrough: config.envPassthrough, onCommand: options.onCommand }),
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
