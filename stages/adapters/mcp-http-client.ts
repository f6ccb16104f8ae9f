/**
 * The HTTP client MCP servers are reached with outside the agent (the build,
 * `forge mcp`): the same egress checks as when the agent runs, with the
 * hosts forge.yaml names (the tools' own endpoints change nothing for an MCP server).
 */
import { createEgressPolicy } from '../../runtime/guard/egress.ts';
import { HttpClient } from '../../runtime/net/http-client.ts';
import type { ProjectConfig } from '../config/project-config.ts';
import { collectEndpoints, deriveEgress } from '../derive-egress.ts';

export { HttpClient };

export function mcpHttpClient(config: ProjectConfig): HttpClient {
  return new HttpClient(createEgressPolicy(deriveEgress(config.egress, collectEndpoints(config, [], [])).egress));
}
