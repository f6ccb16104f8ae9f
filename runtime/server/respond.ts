/** Small helpers for JSON responses on node:http. */
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, code: DiagnosticCode, message: string, hint?: string): void {
  sendJson(res, status, { error: { code, message, ...(hint ? { hint } : {}) } });
}
