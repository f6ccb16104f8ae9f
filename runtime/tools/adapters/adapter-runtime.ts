/**
 * Adapter tools at run time: makes the running tool for an adapter spec
 * (an MCP server's tool, an OpenAPI operation) and owns the MCP
 * connections. The adapter modules come in from outside — the bundle's
 * entry imports only those the agent uses, so this file imports none.
 */
import { error, warning, type Diagnostic } from '../../diagnostics.ts';
import type { AdapterFactory } from '../create-tools.ts';
import type { Tool, ToolSpec } from '../model.ts';
import type * as McpModule from './mcp/index.ts';
import type * as OpenApiModule from './openapi/index.ts';
import type { ApiSettings, McpServerSettings } from './settings.ts';
import { stderrExcerpt } from '../../exec/output-buffer.ts';

export interface AdapterModules {
  mcp?: typeof McpModule;
  openapi?: typeof OpenApiModule;
}

export interface AdapterSettings {
  mcp?: { servers: McpServerSettings[] };
  apis?: ApiSettings[];
}

/** What adapter tools reach their services with (the OpenAPI adapter needs only http and env). */
export type AdapterContext = McpModule.McpContext;

/**
 * The runtime owns the MCP connections its tools share: a tool never closes
 * them (hot reload retires tools one by one). Its owner closes it: the
 * registry it was assembled with, at shutdown (ToolRegistry.own), or hot
 * reload, which replaces it as a whole once its calls are done.
 */
export interface AdapterRuntime extends AdapterFactory {
  /** The MCP connections, when the agent has MCP servers. */
  mcp?: McpModule.McpConnections;
  /** Closes the connections now: a call still running on one fails. */
  close(): Promise<void>;
  /** Closes the connections once the calls running on them are done. */
  closeWhenIdle(): Promise<void>;
}

export function createAdapterRuntime(settings: AdapterSettings, modules: AdapterModules, ctx: AdapterContext): AdapterRuntime {
  const servers = settings.mcp?.servers ?? [];
  const connections = servers.length && modules.mcp ? new modules.mcp.McpConnections(servers, ctx) : undefined;
  return {
    mcp: connections,
    create(spec: ToolSpec): Tool {
      const binding = spec.adapter!;
      if (binding.kind === 'mcp') {
        if (!connections?.settings(binding.server)) throw new Error(`tool "${spec.name}" belongs to MCP server "${binding.server}", which is not configured`);
        return modules.mcp!.createMcpTool(spec, connections);
      }
      const api = settings.apis?.find((a) => a.name === binding.api);
      if (!api || !modules.openapi) throw new Error(`tool "${spec.name}" belongs to API "${binding.api}", which is not configured`);
      return modules.openapi.createOpenApiTool(spec, api, ctx);
    },
    close: async () => {
      await connections?.close();
    },
    closeWhenIdle: async () => {
      await connections?.closeWhenIdle();
    },
  };
}

export interface StartedTools {
  /** The specs to register: those of servers that failed, and tools a server no longer offers, are left out. */
  specs: ToolSpec[];
  diagnostics: Diagnostic[];
}

/**
 * Start-up: connects every MCP server at once. A required server that
 * fails is an error (the caller stops); an optional one is a warning and its
 * tools are left out. A recorded tool the server no longer offers is left
 * out with a warning — agent.json is the tool set that was built and
 * reviewed, so a tool the server added since is not taken on either.
 */
/** `servers`: the MCP servers to connect now (default: all); the tools of the others connect on first use. */
export async function startAdapterTools(runtime: AdapterRuntime, specs: readonly ToolSpec[], servers?: ReadonlySet<string>): Promise<StartedTools> {
  const diagnostics: Diagnostic[] = [];
  if (!runtime.mcp) return { specs: [...specs], diagnostics };
  const results = await runtime.mcp.startAll(servers);
  const unavailable = new Set<string>();
  const offered = new Map<string, Set<string>>();
  for (const { server, session, error: failure } of results) {
    if (session) {
      offered.set(server.name, new Set(session.tools.map((t) => t.name)));
      continue;
    }
    unavailable.add(server.name);
    // The server's own last words say why (a missing package, no network): quote them.
    const said = failure.details ? `\n${stderrExcerpt(failure.details, 8).map((l) => `    ${l}`).join('\n')}` : '';
    if (server.required) diagnostics.push(error('FORGE_MCP_CONNECT', `${failure.message} (a required server)${said}`, {}, failure.hint ?? 'set required: false to start without it'));
    else diagnostics.push(warning('FORGE_MCP_SKIPPED', `${failure.message}; its tools are not available${said}`, {}, failure.hint));
  }
  const kept = specs.filter((spec) => {
    if (spec.adapter?.kind !== 'mcp') return true;
    if (unavailable.has(spec.adapter.server)) return false;
    const tools = offered.get(spec.adapter.server);
    if (tools && !tools.has(spec.adapter.tool)) {
      diagnostics.push(warning('FORGE_MCP_TOOL_GONE', `MCP server "${spec.adapter.server}" no longer offers tool "${spec.adapter.tool}"; ${spec.name} is not available`, {}, 'rebuild to record the server\'s current tools'));
      return false;
    }
    return true;
  });
  return { specs: kept, diagnostics };
}
