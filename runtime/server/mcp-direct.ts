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
 * tool set changes (hot reload, a forged tool), so clients list again. At
 * most MAX_MCP_STREAMS are kept; past that the oldest is closed.
 * DELETE is 405 (there is no session to end).
 *
 * notifications/cancelled stops a call in flight (the SDK client sends one
 * when its AbortSignal fires; it does not drop the POST that carries the
 * call). The notice comes on another POST, often another connection, and
 * with no session the request id is all it names: ids are small counters
 * every client starts over, and every client holds the one bearer token.
 * So a notice cancels a call only when it comes from the same address as
 * the POST that carries the call and exactly one call in flight matches it;
 * otherwise it is ignored, as the spec allows (cancellation is best effort).
 * Only this process's calls are seen: behind a load balancer a notice that
 * reaches another replica cancels nothing. A cancelled call gets no answer
 * (as from the SDK's server); its POST is closed with 202.
 */
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../vendor/mcp-versions.ts';
import { callParamsError, callToolResult, listToolsResult, MCP_CALLS_AT_ONCE, type McpToolSource } from './mcp-tool-calls.ts';
import type { McpEndpoint } from './mcp-endpoint.ts';
import { ProcessSlots } from '../exec/process-slots.ts';
import { sendJson } from './respond.ts';

/** The SDK transport's limit on one batch. */
const MAX_BATCH_SIZE = 100;

/**
 * Standing event streams kept at once, as many as MCP sessions (mcp-http.ts). A stream costs
 * its client nothing to hold and never ends on its own (a client that vanished without a FIN
 * stays until the connection cap): without a cap, GET /mcp alone took every connection the
 * server accepts, and /healthz, REST and every other client were refused. Past the cap the
 * oldest stream is closed, connection and all; a live client opens another (the spec lets a
 * server close the stream at any time).
 */
export const MAX_MCP_STREAMS = 256;

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

type JsonRpcResponse = { jsonrpc: '2.0'; id: string | number; result: unknown } | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };

/** The reason a call is aborted with when its client cancelled it. */
const CANCELLED = Symbol('cancelled by the client');
/** JSON-RPC's "request cancelled" (LSP's code; MCP names none). The client that cancelled has stopped listening for it. */
const REQUEST_CANCELLED = -32800;

export class McpDirectEndpoint implements McpEndpoint {
  private readonly open = new Set<AbortController>();
  /** Calls in flight by client address and request id (see the notes above on why both). */
  private readonly inFlight = new Map<string, Set<AbortController>>();
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
    // Each message of the batch listens to it while it waits its turn or runs (one listener at a
    // time, removed when it ends): up to the batch's size at once (MAX_BATCH_SIZE), all gone with
    // the request. Past Node's default of 10, a batch of 11 calls made it warn of a leak there was not.
    setMaxListeners(Math.max(defaultMaxListeners, messages.length), controller.signal);
    this.open.add(controller);
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      this.open.delete(controller);
    });
    const address = req.socket.remoteAddress ?? '';
    // At most MCP_CALLS_AT_ONCE of the batch run together; the rest wait their turn, answered in the batch's order.
    const turns = new ProcessSlots(MCP_CALLS_AT_ONCE, Number.POSITIVE_INFINITY);
    const answers = await Promise.all(
      messages.map(async (m) => {
        const turn = await turns.acquire(controller.signal);
        // The client went away while this message waited: no one is left to answer.
        if (!('release' in turn)) return undefined;
        try {
          return await this.answerTracked(m, address, controller.signal);
        } finally {
          turn.release();
        }
      }),
    );
    const responses = answers.filter((a): a is JsonRpcResponse => a !== undefined);
    // Only notifications, responses and cancelled calls: accepted, nothing to say.
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
    if (this.streams.size >= MAX_MCP_STREAMS) {
      const [oldest] = this.streams;
      this.streams.delete(oldest);
      oldest.end();
    }
    // The connection ends with the stream: one closed (past the cap, at shutdown) frees its connection at once.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
    res.flushHeaders();
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
  }

  /** Answers a message with a call of its own that a notifications/cancelled from its client can abort. */
  private async answerTracked(message: JsonRpcMessage, address: string, request: AbortSignal): Promise<JsonRpcResponse | undefined> {
    if (message.method === 'notifications/cancelled') {
      this.cancel(address, message.params?.requestId);
      return undefined;
    }
    if (message.method !== 'tools/call' || message.id === undefined || message.id === null) return this.answer(message, request);
    const key = callKey(address, message.id);
    const call = new AbortController();
    const stop = () => call.abort(request.reason);
    if (request.aborted) stop();
    else request.addEventListener('abort', stop, { once: true });
    const calls = this.inFlight.get(key) ?? new Set();
    this.inFlight.set(key, calls.add(call));
    try {
      const answer = await this.answer(message, call.signal);
      // The POST still gets an answer: behind one proxy address a cancel may name another client's call, which must not hang.
      return call.signal.reason === CANCELLED ? { jsonrpc: '2.0', id: message.id as string | number, error: { code: REQUEST_CANCELLED, message: 'Request cancelled (notifications/cancelled named it)' } } : answer;
    } finally {
      request.removeEventListener('abort', stop);
      calls.delete(call);
      if (calls.size === 0) this.inFlight.delete(key);
    }
  }

  private cancel(address: string, requestId: unknown): void {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const calls = this.inFlight.get(callKey(address, requestId));
    // Two clients at one address (or behind one proxy) may both have this id in flight: cancel neither.
    if (calls?.size === 1) for (const call of calls) call.abort(CANCELLED);
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
        const invalid = callParamsError(params);
        if (invalid) return { jsonrpc: '2.0', id, error: { code: -32602, message: invalid } };
        return { jsonrpc: '2.0', id, result: await callToolResult(this.tools, params.name as string, params.arguments ?? {}, signal) };
      }
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
    }
  }
}

/** 7 and "7" are different ids. */
function callKey(address: string, id: string | number): string {
  return `${address}\u0000${typeof id}:${id}`;
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
