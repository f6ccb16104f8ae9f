/**
 * MCP over Streamable HTTP without sessions (the default): every POST gets
 * its own SDK transport and server object and no `mcp-session-id`, so any
 * replica behind a load balancer answers any request. A GET opens the
 * spec's standalone event stream, tied to no session: it carries only
 * notifications/tools/list_changed, sent when this process's tool set
 * changes (hot reload, a forged tool), so clients list again. DELETE is 405
 * (there is no session to end). Stateful sessions (McpHttpEndpoint) stay
 * available for one process with FORGE_MCP_SESSIONS=stateful.
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
  private readonly streams = new Set<ServerResponse>();
  private readonly unsubscribe?: () => void;

  /** `onToolsChanged`: the tool source's change feed (absent where the tool set never changes). */
  constructor(
    private readonly createServer: () => Server,
    onToolsChanged?: (listener: () => void) => () => void,
  ) {
    this.unsubscribe = onToolsChanged?.(() => {
      const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
      for (const stream of this.streams) stream.write(event);
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (req.method === 'GET' && this.unsubscribe && /\btext\/event-stream\b/.test(req.headers.accept ?? '')) return this.openStream(res);
    if (req.method !== 'POST') {
      res.setHeader('allow', this.unsubscribe ? 'GET, POST' : 'POST');
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
    this.unsubscribe?.();
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    await Promise.allSettled([...this.open].map((t) => t.close()));
    this.open.clear();
  }

  private openStream(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
  }
}

/** FORGE_MCP_SESSIONS=stateful keeps MCP sessions in this process (one process only). */
export function mcpSessionsWanted(env: NodeJS.ProcessEnv): boolean {
  return env.FORGE_MCP_SESSIONS?.trim().toLowerCase() === 'stateful';
}
