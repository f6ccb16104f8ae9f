/**
 * MCP over Streamable HTTP without sessions (the default): every POST gets
 * its own SDK transport and server object and no `mcp-session-id`, so any
 * replica behind a load balancer answers any request. Without a session
 * there is no standing event stream: GET and DELETE are 405, as the spec
 * allows. Stateful sessions (McpHttpEndpoint) stay available for one
 * process with FORGE_MCP_SESSIONS=stateful.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '../vendor/protocol.ts';
import { sendJson } from './respond.ts';

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  closeAll(): Promise<void>;
}

export class McpStatelessEndpoint implements McpEndpoint {
  private readonly open = new Set<StreamableHTTPServerTransport>();

  constructor(private readonly createServer: () => Server) {}

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: this server keeps no MCP sessions (POST each request)' } });
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = this.createServer();
    this.open.add(transport);
    res.on('close', () => {
      this.open.delete(transport);
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.open].map((t) => t.close()));
    this.open.clear();
  }
}

/** FORGE_MCP_SESSIONS=stateful keeps MCP sessions in this process (one process only). */
export function mcpSessionsWanted(env: NodeJS.ProcessEnv): boolean {
  return env.FORGE_MCP_SESSIONS?.trim().toLowerCase() === 'stateful';
}
