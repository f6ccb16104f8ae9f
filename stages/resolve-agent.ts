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
import type { AdapterModules } from '../runtime/tools/adapters/adapter-runtime.ts';
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
export async function resolveProject(project: Project, options: { tools?: readonly ProjectTool[]; prod?: boolean } = {}): Promise<SourceAgentParts> {
  const { config } = project;
  const tools = (options.tools ?? project.tools).filter((t) => !t.unavailable);
  const manifest = createManifest(config, tools.map((t) => t.spec), options.prod ?? false, project.adapters);
  return { resolved: { manifest, workDir: config.workDir }, code: await sourceCode(project) };
}

/** The project's files as the code of its tools. */
export async function sourceCode(project: Project): Promise<CodeSource> {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const origins = new Map(project.tools.map((t) => [t.spec.name, t.origin]));
  const loadErrors = new Map(project.tools.flatMap((t) => (t.loadErrors ? [[t.spec.name, t.loadErrors] as const] : [])));
  // The YAML definitions the load read and checked: a tool runs what was checked, without reading its file again.
  const yamlDefinitions = new Map(project.tools.flatMap((t) => (t.yaml ? [[t.spec.name, t.yaml.definition] as const] : [])));
  return {
    builtins,
    adapterModules: await adapterModules(project),
    yamlTools: (host) => createYamlToolFactory(host, yamlDefinitions),
    resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
    node: createSourceNodeLauncher(config.root),
    origin: (spec) => origins.get(spec.name) ?? spec.name,
    loadErrors: (spec) => loadErrors.get(spec.name),
  };
}

/**
 * The adapter modules the project uses, as the bundle carries only those: the
 * MCP SDKs (with zod and the A2A SDK beside them) and the OpenAPI adapter load
 * only for a project with MCP servers or APIs, so that `forge tool run` of a
 * Python tool does not evaluate them first.
 */
async function adapterModules(project: Project): Promise<AdapterModules> {
  const uses = (kind: 'mcp' | 'openapi') => project.tools.some((t) => t.spec.adapter?.kind === kind);
  const [mcp, openapi] = await Promise.all([
    project.config.mcpServers.length > 0 || uses('mcp') ? import('../runtime/tools/adapters/mcp/index.ts') : undefined,
    project.config.apis.length > 0 || uses('openapi') ? import('../runtime/tools/adapters/openapi/index.ts') : undefined,
  ]);
  return { ...(mcp && { mcp }), ...(openapi && { openapi }) };
}
