/** Small helpers for JSON responses on node:http. */
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, code: DiagnosticCode, message: string, hint?: string): void {
  // The shape of a failed tool call's result, so a client reads every failure one way.
  sendJson(res, status, { ok: false, error: { code, message, ...(hint ? { hint } : {}) } });
}

/** The endpoints that speak JSON-RPC: their clients read failures as JSON-RPC error objects. */
export function isJsonRpcPath(path: string): boolean {
  return path === '/mcp' || path === '/a2a' || path === '/';
}

/**
 * A failure answered before a request reaches its endpoint (a refusal, a body the limits stop),
 * in the shape the endpoint's clients read: a JSON-RPC error object (the Forge code and hint in
 * `data`) on /mcp and /a2a, the REST `{ error: { code, message, hint } }` elsewhere.
 */
export function sendFailure(res: ServerResponse, path: string, status: number, failure: { code: DiagnosticCode; message: string; hint?: string; rpcCode?: number }): void {
  const { code, message, hint } = failure;
  if (!isJsonRpcPath(path)) return sendError(res, status, code, message, hint);
  // -32000: the JSON-RPC range for server errors, as the MCP SDK's transport answers refusals.
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code: failure.rpcCode ?? -32000, message, data: { code, ...(hint ? { hint } : {}) } } });
}
