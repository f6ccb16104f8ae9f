/**
 * Stage: discover adapters. The tools of forge.yaml's MCP servers and APIs
 * (live, or as the last build recorded them), the settings agent.json
 * records for the runtime, and the egress section with every host the
 * agent will need. Runs while the custom tools are discovered and parsed.
 */
import type { EgressSettings } from '../runtime/manifest.ts';
import type { ApiSettings, McpServerSettings } from '../runtime/tools/adapters/settings.ts';
import type { DiscoveryMode } from './adapters/discover-mcp.ts';
import { readRecordedAdapters } from './adapters/recorded-manifest.ts';
import type { ProjectConfig } from './config/project-config.ts';
import { collectEndpoints, deriveEgress, shippedToolEndpoints } from './derive-egress.ts';
import { forgeVersion } from './forge-paths.ts';
import type { ProjectTool } from './project-tool.ts';
import type { StageContext } from './stage.ts';

export type { DiscoveryMode };

export interface DiscoveredAdapters {
  tools: ProjectTool[];
  /** What agent.json records for the runtime (no locations, secrets as ${VAR}). */
  mcpServers: McpServerSettings[];
  apis: ApiSettings[];
  /** forge.yaml's egress plus the hosts the agent needs. */
  egress: EgressSettings;
  derivedEgress: { entry: string; from: string }[];
  /** Local spec files read (inputs of the build cache). */
  files: string[];
  /** Servers and specs that were asked live: a cached build cannot stand for a new one. */
  live: string[];
}

export interface AdapterDiscoveryOptions {
  mode: DiscoveryMode;
  /** The agent.json of the last build, for offline discovery. */
  recordedFile: string;
}

export async function discoverAdapters(config: ProjectConfig, options: AdapterDiscoveryOptions, ctx: StageContext): Promise<DiscoveredAdapters> {
  const toolEndpoints = await shippedToolEndpoints(config);
  const mcpServers = config.mcpServers.map(({ at: _at, ...settings }) => settings);
  if (config.mcpServers.length === 0 && config.apis.length === 0) {
    const { egress, derived, diagnostics } = deriveEgress(config.egress, collectEndpoints(config, toolEndpoints, []));
    ctx.report(...diagnostics);
    return { tools: [], mcpServers, apis: [], egress, derivedEgress: derived, files: [], live: [] };
  }

  const recorded = readRecordedAdapters(options.recordedFile);
  // The HTTP client, the MCP SDK and the OpenAPI parser load only for a project that uses them.
  const [{ mcpHttpClient, HttpClient }, { silentLogger }] = await Promise.all([import('./adapters/mcp-http-client.ts'), import('../runtime/tools/registry.ts')]);
  const http = mcpHttpClient(config);
  const [mcp, openapi] = await Promise.all([
    import('./adapters/discover-mcp.ts').then((m) =>
      m.discoverMcpTools(config.mcpServers, options.mode, recorded, { http, env: process.env, log: silentLogger, workDir: config.workDir, clientVersion: forgeVersion() }),
    ),
    // The build fetches a spec on the web for itself, not for the agent: no egress rules apply.
    import('./adapters/discover-openapi.ts').then((m) => m.discoverOpenApiTools(config.apis, options.mode, recorded, new HttpClient())),
  ]);
  const { egress, derived, diagnostics } = deriveEgress(config.egress, collectEndpoints(config, toolEndpoints, openapi.apis));
  ctx.report(...mcp.diagnostics, ...openapi.diagnostics, ...diagnostics);
  return {
    tools: [...mcp.tools, ...openapi.tools],
    mcpServers,
    apis: openapi.apis,
    egress,
    derivedEgress: derived,
    files: openapi.files,
    live: [...mcp.contacted.map((s) => `MCP server ${s}`), ...openapi.fetched.map((a) => `API ${a}`)],
  };
}
