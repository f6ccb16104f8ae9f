/**
 * What the last build recorded in agent.json about adapter tools: each MCP
 * server's tools and each API's operations. `forge build --offline` builds
 * from it instead of connecting, and `forge tool list/describe` show adapter
 * tools from it without reaching any server.
 */
import { readFileSync } from 'node:fs';
import type { AgentManifest } from '../../runtime/manifest.ts';
import type { ApiSettings } from '../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../runtime/tools/model.ts';

export interface RecordedAdapters {
  mcpTools(server: string): ToolSpec[] | undefined;
  apiTools(api: string): ToolSpec[] | undefined;
  api(name: string): ApiSettings | undefined;
}

export function readRecordedAdapters(file: string): RecordedAdapters | undefined {
  let manifest: AgentManifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as AgentManifest;
  } catch {
    return undefined;
  }
  const servers = new Set((manifest.mcp?.servers ?? []).map((s) => s.name));
  const apis = new Map((manifest.apis ?? []).map((a) => [a.name, a]));
  const tools = manifest.tools ?? [];
  return {
    mcpTools: (server) => (servers.has(server) ? tools.filter((t) => t.adapter?.kind === 'mcp' && t.adapter.server === server) : undefined),
    apiTools: (api) => (apis.has(api) ? tools.filter((t) => t.adapter?.kind === 'openapi' && t.adapter.api === api) : undefined),
    api: (name) => apis.get(name),
  };
}
