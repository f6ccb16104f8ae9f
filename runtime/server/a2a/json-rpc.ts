/**
 * A2A JSON-RPC on node:http, both protocol generations on one endpoint:
 * v1.0 (SendMessage, SendStreamingMessage, GetTask, CancelTask; the
 * `A2A-Version` header says 1.0) and v0.3 (message/send, message/stream,
 * tasks/get, tasks/cancel). The SDK's transport handlers do the protocol
 * work; this file moves bytes and streams server-sent events. Malformed
 * requests get the spec's error codes, never a crash.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaultServerCallContextBuilder, JsonRpcTransportHandler, UnauthenticatedUser } from '../../vendor/a2a.ts';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '../../vendor/a2a.ts';
import { sendJson } from '../respond.ts';
import { SEND_METHODS, type A2AStoreGuard } from './store-guard.ts';
import type { TurnLimit } from './turn-limit.ts';

type JsonRpcResponse = { jsonrpc: string; id: string | number | null; result?: unknown; error?: unknown };

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;

/** v0.3 methods have a slash (message/send); v1.0 methods are PascalCase (SendMessage). */
export function isLegacyRequest(headerVersion: string | undefined, method: unknown): boolean {
  if (headerVersion) return /^0\./.test(headerVersion.trim());
  return typeof method === 'string' && method.includes('/');
}

export function createA2AJsonRpcHandler(requestHandler: A2ARequestHandler, beforeDispatch?: (method: string) => { code: number; message: string } | undefined, storeGuard?: A2AStoreGuard, turns?: TurnLimit, onHangUp?: (context: object) => void) {
  storeGuard?.guard(requestHandler);
  const v1 = new JsonRpcTransportHandler(requestHandler);
  const legacy = new LegacyJsonRpcTransportHandler(requestHandler);

  return async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return sendJson(res, 200, { jsonrpc: '2.0', id: null, error: { code: JSONRPC_PARSE_ERROR, message: 'Parse error: the body is not valid JSON' } });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return sendJson(res, 200, { jsonrpc: '2.0', id: null, error: { code: JSONRPC_INVALID_REQUEST, message: 'Invalid Request: expected a JSON-RPC request object' } });
    }
    const id = (parsed.id as string | number | undefined) ?? null;
    const refusal = typeof parsed.method === 'string' ? beforeDispatch?.(parsed.method) : undefined;
    if (refusal) return sendJson(res, 200, { jsonrpc: '2.0', id, error: refusal });
    const storeAway = typeof parsed.method === 'string' ? await storeGuard?.refuseSend(parsed.method) : undefined;
    if (storeAway) return sendJson(res, 200, { jsonrpc: '2.0', id, error: storeAway });

    const headerVersion = req.headers['a2a-version'] as string | undefined;
    const useLegacy = isLegacyRequest(headerVersion, parsed.method);
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: req.headers,
      requestedVersion: headerVersion ?? (useLegacy ? '0.3' : '1.0'),
    });
    const sendsMessage = typeof parsed.method === 'string' && SEND_METHODS.has(parsed.method);
    // A message takes room for its turn before the SDK sees it, and gives back what no turn took when the request ends.
    const turnLimit = sendsMessage ? turns : undefined;
    if (turnLimit && !turnLimit.reserve(context)) return sendJson(res, 200, { jsonrpc: '2.0', id, error: turnLimit.refusal() });
    try {
      await dispatch(parsed, id, useLegacy, sendsMessage, context, res);
    } finally {
      turnLimit?.release(context);
    }
  };

  async function dispatch(parsed: Record<string, unknown>, id: string | number | null, useLegacy: boolean, sendsMessage: boolean, context: ReturnType<typeof defaultServerCallContextBuilder>, res: ServerResponse): Promise<void> {
    // A failure the store caused is answered as Forge's; any other in the transport's own mapping.
    const errorFor = (err: unknown) => storeGuard?.answerFor(parsed.method, context) ?? (useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err) : JsonRpcTransportHandler.mapToJSONRPCError(err));
    let response: JsonRpcResponse | AsyncGenerator<JsonRpcResponse, void, undefined>;
    try {
      response = useLegacy ? await legacy.handle(parsed, context) : await v1.handle(parsed, context);
    } catch (err) {
      const error = errorFor(err);
      return sendJson(res, 200, { jsonrpc: '2.0', id, error });
    }
    if (!(Symbol.asyncIterator in (response as object))) {
      // The transport maps every failure to its own error object: one the store caused is answered as Forge's.
      // So is a result whose turn lost the store (the executor ended its task failed, and noted why).
      const storeFailure = storeGuard?.answerFor(parsed.method, context);
      return sendJson(res, 200, storeFailure ? { jsonrpc: '2.0', id: (response as JsonRpcResponse).id, error: storeFailure } : response);
    }

    // Keep-alive, unless a stop has begun and said close already (closing-connections.ts): writeHead's headers override it.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: String(res.getHeader('connection') ?? 'keep-alive') });
    let endedStoreAway = false;
    // A message's stream is read to its turn's end even once its client hung up: the SDK saves each event
    // only as the stream is read, and a stream left there left its task `working` for good (kept in memory
    // by the file store, with its history) after the turn had ended. Other streams (resubscribe) just stop.
    // A resubscribe waits on its task's events, which a paused task may never send: its subscription ends with its client.
    if (!sendsMessage) res.on('close', () => !res.writableFinished && onHangUp?.(context));
    try {
      for await (const event of response as AsyncGenerator<JsonRpcResponse>) {
        if (res.destroyed) {
          if (sendsMessage) continue;
          break;
        }
        // The turn lost the store (the executor noted it before publishing the task failed): the client's
        // last event is Forge's error. The SDK's stream is drained, not left: it saves (or keeps) each event
        // before yielding it, the task's failed state among them.
        if (endedStoreAway) continue;
        const storeFailure = storeGuard?.answerFor(parsed.method, context);
        endedStoreAway = storeFailure !== undefined;
        res.write(`data: ${JSON.stringify(storeFailure ? { jsonrpc: '2.0', id, error: storeFailure } : event)}\n\n`);
      }
    } catch (err) {
      // A stream that already ended in Forge's error for the store away gets no second one.
      const error = errorFor(err);
      if (!res.destroyed && !endedStoreAway) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`);
    } finally {
      res.end();
    }
  }
}
