/**
 * MCP over Streamable HTTP without sessions, answered directly: each POST's
 * JSON-RPC messages are dispatched to the same tools/list and tools/call
 * answers the SDK's Server gives (mcp-tool-calls.ts) and the responses go
 * back as one JSON body — no SDK server, transport or per-message schema
 * parse built per request. With no session there is no standing event
 * stream, so GET and DELETE are 405 (as the spec allows) and the SDK client
 * carries on. The header and message checks are the SDK transport's: a
 * client sees the same statuses from either.
 *
 * A GET opens the spec's standalone event stream, tied to no session: it
 * carries only notifications/tools/list_changed, sent when this process's
 * tool set changes (hot reload, a forged tool), so clients list again.
 * DELETE is 405 (there is no session to end).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../vendor/protocol.ts';
import { callToolResult, listToolsResult, type McpToolSource } from './mcp-tool-calls.ts';
import type { McpEndpoint } from './mcp-endpoint.ts';
import { sendJson } from './respond.ts';

/** The SDK transport's limit on one batch. */
const MAX_BATCH_SIZE = 100;

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

type JsonRpcResponse = { jsonrpc: '2.0'; id: string | number; result: unknown } | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };

export class McpDirectEndpoint implements McpEndpoint {
  private readonly open = new Set<AbortController>();
  private readonly streams = new Set<ServerResponse>();
  private readonly unsubscribe?: () => void;

  constructor(
    private readonly identity: { name: string; version: string },
    private readonly tools: McpToolSource,
  ) {
    this.unsubscribe = tools.onToolsChanged?.(() => {
      const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
      for (const stream of this.streams) stream.write(event);
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (req.method === 'GET' && this.unsubscribe && /\btext\/event-stream\b/.test(req.headers.accept ?? '')) return this.openStream(res);
    if (req.method !== 'POST') {
      res.setHeader('allow', this.unsubscribe ? 'GET, POST' : 'POST');
      return rpcError(res, 405, -32000, 'Method not allowed: this server keeps no MCP sessions (POST each request)');
    }
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return rpcError(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      return rpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return rpcError(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) return rpcError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every(isJsonRpcMessage)) return rpcError(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');

    // A call stops when its client goes away.
    const controller = new AbortController();
    this.open.add(controller);
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      this.open.delete(controller);
    });
    const answers = await Promise.all(messages.map((m) => this.answer(m, controller.signal)));
    const responses = answers.filter((a): a is JsonRpcResponse => a !== undefined);
    // Only notifications and responses: accepted, nothing to say.
    if (responses.length === 0) {
      res.writeHead(202).end();
      return;
    }
    sendJson(res, 200, Array.isArray(body) ? responses : responses[0]);
  }

  async closeAll(): Promise<void> {
    this.unsubscribe?.();
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    for (const controller of this.open) controller.abort();
    this.open.clear();
  }

  private openStream(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
  }

  private async answer(message: JsonRpcMessage, signal: AbortSignal): Promise<JsonRpcResponse | undefined> {
    // Notifications (no id) and a client's responses get no answer.
    if (message.method === undefined || message.id === undefined) return undefined;
    const id = message.id as string | number;
    const params = message.params ?? {};
    switch (message.method) {
      case 'initialize': {
        const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined;
        const protocolVersion = requested && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
        return { jsonrpc: '2.0', id, result: { protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: this.identity } };
      }
      case 'ping':
        return { jsonrpc: '2.0', id, result: {} };
      case 'tools/list':
        return { jsonrpc: '2.0', id, result: listToolsResult(this.tools) };
      case 'tools/call': {
        if (typeof params.name !== 'string') return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: tools/call needs a tool name' } };
        const args = params.arguments ?? {};
        if (args === null || typeof args !== 'object' || Array.isArray(args)) return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: arguments must be an object' } };
        return { jsonrpc: '2.0', id, result: await callToolResult(this.tools, params.name, args, signal) };
      }
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
    }
  }
}

function isJsonRpcMessage(value: unknown): value is JsonRpcMessage {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  if (m.id !== undefined && typeof m.id !== 'string' && typeof m.id !== 'number') return false;
  if (m.method !== undefined && typeof m.method !== 'string') return false;
  if (m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) return false;
  // A request or notification names a method; a response carries a result or an error.
  return m.method !== undefined || (m.id !== undefined && ('result' in m || 'error' in m));
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code, message } });
}
