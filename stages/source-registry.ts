/**
 * A registry of a project's tools run straight from sources (no build):
 * what `forge tool run`, `forge run` and `forge chat` use. Specs and code
 * come from the same stages the build runs; every outbound request goes
 * through one HTTP client with the project's egress policy, and every call
 * through the approval policy given.
 */
import { unavailableTool } from '../runtime/tools/unavailable-tool.ts';
import { isAbsolute, join } from 'node:path';
import type { ApprovalPolicy } from '../runtime/guard/approval-policy.ts';
import { createEgressPolicy } from '../runtime/guard/egress.ts';
import { HttpClient } from '../runtime/net/http-client.ts';
import { createAdapterRuntime, type AdapterRuntime } from '../runtime/tools/adapters/adapter-runtime.ts';
import * as mcp from '../runtime/tools/adapters/mcp/index.ts';
import * as openapi from '../runtime/tools/adapters/openapi/index.ts';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import { createRegistry, type RegistryBuild, type ToolFactories } from '../runtime/tools/create-tools.ts';
import type { Logger } from '../runtime/tools/model.ts';
import { silentLogger } from '../runtime/tools/registry.ts';
import { createYamlToolFactory } from '../runtime/tools/yaml/load-yaml-tool.ts';
import type { CommandEvent } from '../runtime/tools/yaml/yaml-tool.ts';
import { forgeVersion } from './forge-paths.ts';
import type { Project } from './load-project.ts';
import type { ProjectTool } from './project-tool.ts';
import { createSourceNodeLauncher } from './source-node-launcher.ts';

export interface SourceRegistryOptions {
  log?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Share one client (and its egress policy) across reloads; made from the project when absent. */
  http?: HttpClient;
  /** Share the adapter connections across reloads. */
  adapters?: AdapterRuntime;
  /** The tools to register (default: all of the project's, dev tools included). */
  tools?: readonly ProjectTool[];
  /** The approval policy calls go through (forge.yaml's approval: plus the command line's rules). */
  approval?: ApprovalPolicy;
  /** Sees every command a YAML tool runs, just before it runs (--show-command). */
  onCommand?: (event: CommandEvent) => void;
}

export interface SourceRegistry extends RegistryBuild {
  http: HttpClient;
  adapters: AdapterRuntime;
}

export function sourceToolFactories(project: Project, options: SourceRegistryOptions = {}): ToolFactories & { http: HttpClient; adapters: AdapterRuntime } {
  const { config } = project;
  const builtins: Record<string, BuiltinDefinition<any>> = {};
  for (const tool of project.tools) if (tool.builtin) builtins[tool.spec.name] = tool.builtin.definition;
  const http = options.http ?? new HttpClient(createEgressPolicy(project.adapters.egress));
  const env = options.env ?? process.env;
  const adapters =
    options.adapters ??
    createAdapterRuntime(
      { mcp: { servers: project.adapters.mcpServers }, apis: project.adapters.apis },
      { mcp, openapi },
      { http, env, log: options.log ?? silentLogger, workDir: config.workDir, clientVersion: forgeVersion() },
    );
  return {
    builtins,
    log: options.log,
    http,
    env,
    adapters,
    approval: options.approval,
    yaml: createYamlToolFactory(
      { workDir: config.workDir, envPassthrough: config.envPassthrough, onCommand: options.onCommand },
      new Map(project.tools.flatMap((t) => (t.yaml ? [[t.spec.name, t.yaml.definition]] : []))),
    ),
    schedules: config.schedules,
    strictOutputs: config.strictOutputs,
    agentConfig: describeConfig(project),
    custom: {
      workDir: config.workDir,
      envPassthrough: config.envPassthrough,
      resolveSource: (path) => (isAbsolute(path) ? path : join(config.root, path)),
      node: createSourceNodeLauncher(config.root),
    },
  };
}

export function createSourceRegistry(project: Project, options: SourceRegistryOptions = {}): SourceRegistry {
  // Tools for another platform are listed (with a note) but never registered.
  const tools = (options.tools ?? project.tools).filter((t) => !t.unavailable);
  const origins = new Map(tools.map((t) => [t.spec.name, t.origin]));
  const factories = sourceToolFactories(project, options);
  const built = createRegistry(
    tools.filter((t) => !t.loadErrors).map((t) => t.spec),
    factories,
    (spec) => origins.get(spec.name) ?? spec.name,
  );
  for (const t of tools) if (t.loadErrors) built.registry.register(unavailableTool(t.spec.name, t.loadErrors, t.spec), t.origin);
  return { ...built, http: factories.http, adapters: factories.adapters };
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
