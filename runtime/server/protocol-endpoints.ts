/**
 * The endpoints that speak a protocol through its SDK: A2A JSON-RPC and MCP
 * over Streamable HTTP. agent-server.ts loads this module on the first
 * request that needs it, so the SDKs (several hundred kB of code to
 * evaluate) are not on the path from `serve` to the first answered
 * request; health, REST and the agent card never load them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from '../agent/agent.ts';
import type { AgentManifest } from '../manifest.ts';
import { DefaultRequestHandler, InMemoryTaskStore } from '../vendor/protocol.ts';
import { buildAgentCard } from './a2a/agent-card.ts';
import { ForgeAgentExecutor } from './a2a/executor.ts';
import { createA2AJsonRpcHandler } from './a2a/json-rpc.ts';
import { McpDirectEndpoint } from './mcp-direct.ts';
import { McpHttpEndpoint } from './mcp-http.ts';
import { createMcpServer, type McpToolSource } from './mcp-server.ts';

const SEND_METHODS = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

export interface ProtocolEndpoints {
  a2a(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  mcp: Pick<McpHttpEndpoint, 'handle' | 'closeAll'>;
}

export function createProtocolEndpoints(options: { manifest: AgentManifest; tools: McpToolSource; agent: Agent; baseUrl: string; authRequired: boolean; mcpSessions?: boolean }): ProtocolEndpoints {
  const { manifest, tools, agent } = options;
  const mcpIdentity = { name: manifest.agent_id, version: manifest.version };
  // Stateless by default (any replica answers any request); sessions (with list_changed notices on a standing stream) on request.
  const mcpSessions = options.mcpSessions ?? process.env.FORGE_MCP_SESSIONS?.trim().toLowerCase() === 'stateful';
  const mcp = mcpSessions ? new McpHttpEndpoint(() => createMcpServer(mcpIdentity, tools)) : new McpDirectEndpoint(mcpIdentity, tools);
  const requestHandler = new DefaultRequestHandler(buildAgentCard(manifest, options.baseUrl, options.authRequired), new InMemoryTaskStore(), new ForgeAgentExecutor(agent));
  const a2a = createA2AJsonRpcHandler(requestHandler, (method) =>
    SEND_METHODS.has(method) && !agent.hasModel ? { code: -32004, message: 'no model configured: add a `model:` section (provider and name) to forge.yaml; tools are still served over MCP and REST' } : undefined,
  );
  return { a2a, mcp };
}
