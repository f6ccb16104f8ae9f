/**
 * What the last build recorded in agent.json about adapter tools: each MCP
 * server's tools and each API's operations. `forge build --offline` builds
 * from it instead of connecting, and `forge tool list/describe` show adapter
 * tools from it without reaching any server.
 */
import { readFileSync } from 'node:fs';
import type { AgentManifest } from '../../runtime/manifest.ts';
import type { ApiSettings, McpServerSettings } from '../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../runtime/tools/model.ts';

export interface RecordedAdapters {
  mcpTools(server: string): ToolSpec[] | undefined;
  apiTools(api: string): ToolSpec[] | undefined;
  api(name: string): ApiSettings | undefined;
  mcpServer(name: string): McpServerSettings | undefined;
}

/**
 * Whether a list recorded under `recorded` still answers for forge.yaml's entry as it is now: the settings that
 * decide which tools there are (how the server is reached, what it is given, the allow/deny globs; an API's
 * spec and include/exclude) are the same. A source command (`forge tool list`, `tool run`, `validate`) asks the
 * server or spec again when they are not, instead of serving what another configuration found.
 */
export function sameToolSource(recorded: object, now: object, keys: readonly string[]): boolean {
  const pick = (settings: object) => JSON.stringify(keys.map((key) => (settings as Record<string, unknown>)[key] ?? null));
  return pick(recorded) === pick(now);
}

/** The MCP server settings a server's tool list depends on (not its timeout, or whether it is required). */
export const MCP_TOOL_SOURCE = ['transport', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'tools'] as const;
/** The API settings its operations depend on. */
export const API_TOOL_SOURCE = ['spec', 'include', 'exclude'] as const;

export function readRecordedAdapters(file: string): RecordedAdapters | undefined {
  let manifest: AgentManifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as AgentManifest;
  } catch {
    return undefined;
  }
  const servers = new Map((manifest.mcp?.servers ?? []).map((s) => [s.name, s]));
  const apis = new Map((manifest.apis ?? []).map((a) => [a.name, a]));
  const tools = manifest.tools ?? [];
  return {
    mcpTools: (server) => (servers.has(server) ? tools.filter((t) => t.adapter?.kind === 'mcp' && t.adapter.server === server) : undefined),
    apiTools: (api) => (apis.has(api) ? tools.filter((t) => t.adapter?.kind === 'openapi' && t.adapter.api === api) : undefined),
    api: (name) => apis.get(name),
    mcpServer: (name) => servers.get(name),
  };
}
