/**
 * MCP over Streamable HTTP, either way it is served: stateless by default
 * (mcp-direct.ts: any replica behind a load balancer answers any request),
 * or with sessions in this process (mcp-http.ts, FORGE_MCP_SESSIONS=stateful).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  closeAll(): Promise<void>;
}

/** FORGE_MCP_SESSIONS=stateful keeps MCP sessions in this process (one process only). */
export function mcpSessionsWanted(env: NodeJS.ProcessEnv): boolean {
  return env.FORGE_MCP_SESSIONS?.trim().toLowerCase() === 'stateful';
}
