/**
 * A project run straight from sources (`forge tool run`, `forge run`,
 * `forge chat`), resolved into the same shape a bundle reads from its
 * agent.json: the manifest the build would write (egress with every host the
 * adapters and shipped tools need, the same schedules and approval rules),
 * and a CodeSource that runs each tool from the project's files. The
 * runtime is then assembled from it exactly as for a bundle
 * (runtime/assemble.ts).
 */
import { isAbsolute, join } from 'node:path';
import type { CodeSource, ResolvedAgent } from '../runtime/assemble.ts';
import * as mcp from '../runtime/tools/adapters/mcp/index.ts';
import * as openapi from '../runtime/tools/adapters/openapi/index.ts';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createYamlToolFactory } from '../runtime/tools/yaml/load-yaml-tool.ts';
import { createManifest } from './emit-manifest.ts';
import type { Project } from './load-project.ts';
import type { ProjectTool } from './project-tool.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export interface SourceAgentParts {
  resolved: ResolvedAgent;
  code: CodeSource;
}

/**
 * `tools`: the tools to run (default: all of the project's, dev tools
 * included); those for another platform are left out (`forge tool list`
 * lists them with a note).
 */
export function resolveProject(project: Project, options: { tools?: readonly ProjectTool[]; prod?: boolean } = {}): SourceAgentParts {
  const { config } = project;
  const tools = (options.tools ?? project.tools).filter((t) => !t.unavailable);
  const manifest = createManifest(config, tools.map((t) => t.spec), options.prod ?? false, project.adapters);
  return { resolved: { manifest, workDir: config.workDir }, code: sourceCode(project) };
}

/** The project's files as the code of its tools. */
export function sourceCode(project: Project): CodeSource {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const origins = new Map(project.tools.map((t) => [t.spec.name, t.origin]));
  const loadErrors = new Map(project.tools.flatMap((t) => (t.loadErrors ? [[t.spec.name, t.loadErrors] as const] : [])));
  // The YAML definitions the load read and checked: a tool runs what was checked, without reading its file again.
  const yamlDefinitions = new Map(project.tools.flatMap((t) => (t.yaml ? [[t.spec.name, t.yaml.definition] as const] : [])));
  return {
    builtins,
    adapterModules: { mcp, openapi },
    yamlTools: (host) => createYamlToolFactory(host, yamlDefinitions),
    resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
    node: createSourceNodeLauncher(config.root),
    origin: (spec) => origins.get(spec.name) ?? spec.name,
    loadErrors: (spec) => loadErrors.get(spec.name),
  };
}
