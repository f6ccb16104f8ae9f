/**
 * The one place a running agent is put together: approval policy, one HTTP
 * client with the egress policy, the adapters (MCP servers, OpenAPI
 * services) and every tool wired to its code.
 *
 * Like Vite's resolveConfig, the inputs are resolved first into one shape,
 * a ResolvedAgent (agent.json's manifest plus where the agent works): a
 * built bundle reads it from agent.json, a project run from sources resolves
 * forge.yaml into it (stages/resolve-agent.ts) with the same stages the
 * build runs. The two differ only in their CodeSource: where a tool's code
 * comes from (compiled into the bundle, or the project's files).
 */
import { DiagnosticError, type Diagnostic } from './diagnostics.ts';
import { ApprovalPolicy } from './guard/approval-policy.ts';
import { createEgressPolicy } from './guard/egress.ts';
import type { AgentManifest } from './manifest.ts';
import { HttpClient } from './net/http-client.ts';
import { createAdapterRuntime, startAdapterTools, type AdapterModules, type AdapterRuntime } from './tools/adapters/adapter-runtime.ts';
import type { BuiltinDefinition } from './tools/builtin/define.ts';
import { createRegistry, type ToolFactories } from './tools/create-tools.ts';
import { unavailableTool } from './tools/unavailable-tool.ts';
import type { NodeToolLauncher } from './tools/custom/custom-tool.ts';
import type { Logger, ToolSpec } from './tools/model.ts';
import { silentLogger, type ToolRegistry } from './tools/registry.ts';
import type { YamlToolFactory } from './tools/yaml/load-yaml-tool.ts';
import type { CommandEvent, YamlToolHost } from './tools/yaml/yaml-tool.ts';
import { toolsReached } from './tools/reach.ts';
import type { McpServerSettings } from './tools/adapters/settings.ts';
import { createNameFilter } from './tools/adapters/name-filter.ts';

/** An agent resolved from its inputs: all the runtime is assembled from. */
export interface ResolvedAgent {
  /** agent.json's content (for a project run from sources, what its build would write). */
  manifest: AgentManifest;
  /** The directory the tools work in. */
  workDir: string;
}

/** Where the tools' code comes from: the only thing a bundle and a project's sources differ in. */
export interface CodeSource {
  /** Builtin, adapter and dev tools shipped with Forge, by name. */
  builtins: Record<string, BuiltinDefinition<any>>;
  /** The adapter modules (MCP, OpenAPI) the agent uses. */
  adapterModules: AdapterModules;
  /** Makes YAML tools; absent when the agent has none. */
  yamlTools?: (host: YamlToolHost) => YamlToolFactory;
  /** Absolute path of a tool's source file (a spec's `source.path` is relative). */
  resolveSource(path: string): string;
  /** Starts a TypeScript/JavaScript tool's process. */
  node: NodeToolLauncher;
  /** Where a tool came from, for diagnostics: "agent.json#name", "tools/greet.yaml". */
  origin(spec: ToolSpec): string;
  /** A built bundle: hints name its commands (`node runtime.mjs ...`), not the forge CLI. */
  inBundle?: boolean;
  /** Why a tool cannot load, already reported (a builtin's bad config value): it is listed and answers calls with this. */
  loadErrors?(spec: ToolSpec): Diagnostic[] | undefined;
}

export interface AssembleOptions {
  log?: Logger;
  env?: NodeJS.ProcessEnv;
  /** The approval policy; made from the manifest's approval: and `rules` when absent. */
  approval?: ApprovalPolicy;
  /** Extra approval rules from the command line. */
  rules?: { autoApprove?: string[]; autoDeny?: string[] };
  /** Connect the MCP servers first, leaving out the tools of an optional one that is down. */
  connect?: boolean;
  /**
   * With connect: only the servers this tool reaches (itself, or through composedOf) are connected
   * first, and must be up if required; the others connect if a call ever reaches them (the bundle's
   * `call` of one tool is not stopped by a server it never uses).
   */
  connectFor?: string;
  /** The tools to register (default: every tool of the manifest). */
  specs?: readonly ToolSpec[];
  /** Share one client (and its egress policy) across reloads. */
  http?: HttpClient;
  /** Share the adapter connections across reloads (they stay the caller's to close). */
  adapters?: AdapterRuntime;
  /** Sees every command a YAML tool runs, just before it runs (--show-command). */
  onCommand?: (event: CommandEvent) => void;
}

export interface AssembledRuntime {
  registry: ToolRegistry;
  http: HttpClient;
  adapters: AdapterRuntime;
  diagnostics: Diagnostic[];
  /** Closes the registry: its tools, then the adapter runtime it owns (unless options.adapters gave it). */
  close(): Promise<void>;
}

export type Assembly =
  | ({ ok: true } & AssembledRuntime)
  /** `usage`: an approval rule does not parse (exit 2); otherwise a required MCP server is down (exit 1). */
  | { ok: false; usage: boolean; diagnostics: Diagnostic[] };

/** The factories that turn the agent's specs into tools (also what hot reload makes a changed tool with). */
export function runtimeFactories(resolved: ResolvedAgent, code: CodeSource, options: AssembleOptions = {}): ToolFactories & { http: HttpClient; adapters: AdapterRuntime } {
  const { manifest, workDir } = resolved;
  const log = options.log ?? silentLogger;
  const env = options.env ?? process.env;
  // Every outbound request of every tool goes through this one client and its egress policy.
  const http = options.http ?? new HttpClient(createEgressPolicy(manifest.egress));
  const adapters = options.adapters ?? createAdapterRuntime(manifest, code.adapterModules, { http, env, log, workDir, clientVersion: manifest.build?.forge_version, inBundle: code.inBundle });
  // The model's connections, apart from the tools' (serve.ts does the same for the agent loop's model).
  let modelHttp: HttpClient | undefined;
  return {
    builtins: code.builtins,
    log: options.log,
    http,
    env,
    adapters,
    approval: options.approval,
    yaml: code.yamlTools?.({ workDir, envPassthrough: manifest.env_passthrough, onCommand: options.onCommand }),
    schedules: (manifest.schedules ?? []).map((s) => ({ ...s, source: 'config' as const })),
    // Read at each look: forge run --dev puts a saved model: (and the other live sections) in the manifest.
    agentConfig: () => describeAgent(resolved),
    custom: { workDir, envPassthrough: manifest.env_passthrough, resolveSource: code.resolveSource, node: code.node },
    strictOutputs: manifest.strict_outputs,
    // Loaded on first use: only an agent whose forge_tool asks its model to judge pays for it here.
    modelClient: async (model) => (await import('./agent/providers/create-model.ts')).createModelClient(model, (modelHttp ??= http.withOwnPool()), env),
  };
}

export async function assembleRuntime(resolved: ResolvedAgent, code: CodeSource, options: AssembleOptions = {}): Promise<Assembly> {
  let approval = options.approval;
  if (!approval) {
    try {
      approval = ApprovalPolicy.create(resolved.manifest.approval, options.rules);
    } catch (err) {
      if (!(err instanceof DiagnosticError)) throw err;
      return { ok: false, usage: true, diagnostics: err.diagnostics };
    }
  }
  const factories = runtimeFactories(resolved, code, { ...options, approval });
  const { http, adapters } = factories;
  const diagnostics: Diagnostic[] = [];
  let specs = options.specs ?? resolved.manifest.tools;
  if (options.connect) {
    // A required MCP server that fails stops the start; the tools of an optional one that is down are left out.
    const started = await startAdapterTools(adapters, specs, options.connectFor === undefined ? undefined : serversReached(specs, options.connectFor));
    diagnostics.push(...started.diagnostics);
    if (started.diagnostics.some((d) => d.severity === 'error')) {
      if (!options.adapters) await adapters.close();
      return { ok: false, usage: false, diagnostics };
    }
    specs = started.specs;
  }
  const broken = new Map(specs.flatMap((s) => (code.loadErrors?.(s)?.length ? [[s.name, code.loadErrors(s)!] as const] : [])));
  const { registry, diagnostics: problems } = createRegistry(specs.filter((s) => !broken.has(s.name)), factories, code.origin);
  // The MCP connections its tools share close with the registry (what every shutdown closes), not with one tool.
  if (!options.adapters) registry.own(adapters);
  registry.setLeftOut(leftOutByServers(resolved.manifest.mcp?.servers ?? []));
  // Reported once where it is (forge.yaml:line), then listed: a call answers with that error, not "no tool named".
  for (const spec of specs) if (broken.has(spec.name)) registry.register(unavailableTool(spec.name, broken.get(spec.name)!, spec), code.origin(spec));
  return { ok: true, registry, http, adapters, diagnostics: [...diagnostics, ...problems], close: () => registry.close() };
}

/** Why an MCP server's tool is not registered: its server's tools.allow/deny leaves it out. */
export function leftOutByServers(servers: readonly McpServerSettings[]): ((name: string) => string | undefined) | undefined {
  const filtered = servers.filter((s) => s.tools?.allow?.length || s.tools?.deny?.length).map((s) => ({ name: s.name, filter: createNameFilter(s.tools?.allow, s.tools?.deny) }));
  if (!filtered.length) return undefined;
  return (name) => {
    for (const server of filtered) {
      const remote = name.startsWith(`${server.name}__`) ? name.slice(server.name.length + 2) : undefined;
      if (remote && !server.filter.allows(remote)) return `mcp.servers[${server.name}].tools in forge.yaml leaves "${remote}" out`;
    }
    return undefined;
  };
}

/** The MCP servers whose tools `name` reaches, itself or through composedOf. */
function serversReached(specs: readonly ToolSpec[], name: string): Set<string> {
  const start = specs.find((s) => s.name === name);
  const reached = start ? toolsReached(start, specs, (s) => s) : [];
  return new Set(reached.flatMap((tool) => (tool.adapter?.kind === 'mcp' ? [tool.adapter.server] : [])));
}

/** What debug_console shows as the agent's config: the resolved manifest, tools by name. */
export function describeAgent({ manifest, workDir }: ResolvedAgent): Record<string, unknown> {
  return { ...manifest, tools: manifest.tools.map((t) => t.name), categories: undefined, workdir: workDir };
}
