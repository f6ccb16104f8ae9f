/**
 * The tools of forge.yaml's MCP servers, as adapter tools. Live discovery
 * connects to every server at once, lists its tools and disconnects; offline
 * discovery takes the list the last build recorded in agent.json. The
 * server's allow/deny globs apply either way.
 */
import { error, formatLocation, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { connectMcpServer, type McpConnectError, type McpContext } from '../../runtime/tools/adapters/mcp/connect.ts';
import { remoteToolSpec, type RemoteTool } from '../../runtime/tools/adapters/mcp/remote-tool.ts';
import type { McpBinding, McpServerSettings } from '../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../runtime/tools/model.ts';
import type { McpServerConfig } from '../config/adapter-config.ts';
import type { ProjectTool } from '../project-tool.ts';
import { normalizeExternalSchema } from './external-schema.ts';
import { createNameFilter, type NameFilter } from '../../runtime/tools/adapters/name-filter.ts';
import { MCP_TOOL_SOURCE, sameToolSource, type RecordedAdapters } from './recorded-manifest.ts';
import { stderrExcerpt } from '../../runtime/exec/output-buffer.ts';
import { closestMatch } from '../../runtime/suggest.ts';

/** live: connect; offline: the recorded list only; recorded-or-live: the recorded list when there is one. */
export type DiscoveryMode = 'live' | 'offline' | 'recorded-or-live';

export interface McpDiscovery {
  tools: ProjectTool[];
  diagnostics: Diagnostic[];
  /** Servers that were asked (so a cached build cannot stand for this one). */
  contacted: string[];
}

export async function discoverMcpTools(servers: readonly McpServerConfig[], mode: DiscoveryMode, recorded: RecordedAdapters | undefined, ctx: McpContext): Promise<McpDiscovery> {
  const results = await Promise.all(servers.map((server) => discoverServer(server, mode, recorded, ctx)));
  return {
    tools: results.flatMap((r) => r.tools),
    diagnostics: results.flatMap((r) => r.diagnostics),
    contacted: results.filter((r) => r.contacted).map((r) => r.server),
  };
}

async function discoverServer(server: McpServerConfig, mode: DiscoveryMode, recorded: RecordedAdapters | undefined, ctx: McpContext) {
  const diagnostics: Diagnostic[] = [];
  const filter = mcpToolFilter(server);
  // The tools the last build recorded, under today's allow/deny.
  const previous = recorded?.mcpTools(server.name)?.filter((s) => filter.allows((s.adapter as McpBinding).tool));
  // Recorded under other settings (another command, a filter that let fewer through), the list is not today's: ask the server.
  const recordedServer = recorded?.mcpServer(server.name);
  const current = recordedServer !== undefined && sameToolSource(recordedServer, server, MCP_TOOL_SOURCE);
  const done = (specs: ToolSpec[], contacted: boolean) => ({ server: server.name, tools: toProjectTools(server, specs, diagnostics), diagnostics, contacted });

  if (mode === 'offline' || (mode === 'recorded-or-live' && previous && current)) {
    if (previous) return done(previous, false);
    diagnostics.push(error('FORGE_MCP_OFFLINE', `no recorded tool list for MCP server "${server.name}"`, server.at, 'build once without --offline so the server\'s tools are recorded in agent.json'));
    return done([], false);
  }

  let remote: RemoteTool[];
  try {
    const session = await connectMcpServer(server, ctx);
    remote = session.tools;
    await session.close();
  } catch (err) {
    const e = err as McpConnectError;
    const details = e.details ? `\n${stderrExcerpt(e.details, 5).map((l) => `    ${l}`).join('\n')}` : '';
    if (server.required) {
      diagnostics.push(error('FORGE_MCP_CONNECT', `${e.message}${details}`, server.at, e.hint ?? 'fix the server, set required: false, or build with --offline to use the last recorded tools'));
      return done([], true);
    }
    diagnostics.push(warning('FORGE_MCP_CONNECT', `${e.message} (optional server${previous ? ': using the tools recorded by the last build' : ': it has no tools in this build'})${details}`, server.at, e.hint));
    return done(previous ?? [], true);
  }

  const remoteNames = remote.map((t) => t.name);
  for (const pattern of filter.unused(remoteNames)) {
    diagnostics.push(warning('FORGE_MCP_FILTER', `tools.allow pattern "${pattern}" matches no tool of MCP server "${server.name}"`, server.at, `its tools: ${remoteNames.join(', ')}`));
  }
  // A misspelt deny is worse than a misspelt allow: the tool it meant stays in.
  for (const pattern of filter.unusedDeny(remoteNames)) {
    const meant = closestMatch(pattern, remoteNames);
    diagnostics.push(warning('FORGE_MCP_FILTER', `tools.deny pattern "${pattern}" matches no tool of MCP server "${server.name}"${meant ? `, so "${meant}" is not left out` : ''}`, server.at, meant ? `did you mean "${meant}"?` : `its tools: ${remoteNames.join(', ')}`));
  }
  return done(remote.filter((t) => filter.allows(t.name)).map((t) => agentToolSpec(server, t)), true);
}

/** A server's tool as the agent records it: its schemas made plain JSON Schema. */
export function agentToolSpec(server: McpServerSettings, tool: RemoteTool): ToolSpec {
  const spec = remoteToolSpec(server, tool);
  spec.inputSchema = normalizeExternalSchema(spec.inputSchema);
  if (spec.outputSchema) spec.outputSchema = normalizeExternalSchema(spec.outputSchema);
  return spec;
}

/** Which of a server's tools the agent uses: its tools.allow and tools.deny. */
export function mcpToolFilter(server: McpServerSettings): NameFilter {
  return createNameFilter(server.tools?.allow, server.tools?.deny);
}

function toProjectTools(server: McpServerConfig, specs: readonly ToolSpec[], diagnostics: Diagnostic[]): ProjectTool[] {
  const origin = `${formatLocation(server.at)} (MCP server "${server.name}")`;
  const seen = new Map<string, string>();
  const tools: ProjectTool[] = [];
  for (const spec of specs) {
    const remoteName = (spec.adapter as McpBinding).tool;
    const first = seen.get(spec.name);
    if (first !== undefined) {
      diagnostics.push(error('FORGE_TOOL_COLLISION', `MCP server "${server.name}" has tools "${first}" and "${remoteName}", which both become "${spec.name}"`, server.at, 'leave one out with tools.deny'));
      continue;
    }
    seen.set(spec.name, remoteName);
    tools.push({ spec, origin, at: server.at, schemaOrigin: 'external' });
  }
  return tools;
}
