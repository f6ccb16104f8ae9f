/**
 * MCP over Streamable HTTP at /mcp, one SDK transport and one MCP server
 * object per session (sessions start with `initialize` and end with DELETE
 * or when the client goes away). Sessions are capped so that clients that
 * never say goodbye cannot exhaust memory: the oldest is closed first.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '../vendor/mcp.ts';
import { isInitializeRequest } from '../vendor/mcp.ts';
import { sendJson } from './respond.ts';

export const MAX_MCP_SESSIONS = 256;

export class McpHttpEndpoint {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  constructor(private readonly createServer: () => Server) {}

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId ? this.sessions.get(sessionId) : undefined;
    if (sessionId && !transport) {
      return sendJson(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: `unknown or expired MCP session ${sessionId}: initialize a new one` } });
    }
    if (!transport) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: send an initialize request first, or an mcp-session-id header' } });
      }
      return this.initialize(req, res, body);
    }
    await transport.handleRequest(req, res, body);
  }

  /**
   * An initialize gets a transport and a server of its own. The SDK checks
   * the request (Accept, Content-Type, one initialize per batch) only inside
   * handleRequest, after both exist: one it refuses ends with no session,
   * and nothing would ever close its server, which stays subscribed to the
   * registry's tool changes. Such a transport is closed at once.
   */
  private async initialize(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport = await this.open();
    try {
      await transport.handleRequest(req, res, body);
    } finally {
      if (transport.sessionId === undefined) await transport.close().catch(() => {});
    }
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((t) => t.close()));
    this.sessions.clear();
  }

  private async open(): Promise<StreamableHTTPServerTransport> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (this.sessions.size >= MAX_MCP_SESSIONS) {
          const [oldestId, oldest] = this.sessions.entries().next().value as [string, StreamableHTTPServerTransport];
          this.sessions.delete(oldestId);
          void oldest.close();
        }
        this.sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await this.createServer().connect(transport);
    return transport;
  }
}
