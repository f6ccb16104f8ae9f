/**
 * Every HTTP request the agent serves as a server span named by its front
 * end (A2A, MCP, REST, studio), continuing the caller's trace when the
 * request carries a W3C traceparent; and its metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestDuration, requests } from './forge-metrics.ts';
import { parseTraceparent } from './trace-context.ts';
import { startSpan, withSpan, tracingEnabled } from './tracer.ts';

/** The `frontend` label of forge_requests_total: the protocols, the scrapes of /metrics, and the rest (probes, the agent card, 404s). */
export const REQUEST_FRONTENDS = ['a2a', 'mcp', 'rest', 'studio', 'metrics', 'other'] as const;

export function frontendOf(path: string): (typeof REQUEST_FRONTENDS)[number] {
  if (path === '/mcp' || path.startsWith('/mcp/')) return 'mcp';
  if (path === '/a2a' || path === '/') return 'a2a';
  if (path === '/tools' || path.startsWith('/tools/')) return 'rest';
  if (path.startsWith('/studio')) return 'studio';
  if (path === '/metrics') return 'metrics';
  return 'other';
}

export function traceRequest(req: IncomingMessage, res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/';
  const frontend = frontendOf(path);
  const started = performance.now();
  res.once('close', () => {
    requests.inc({ frontend, code: String(res.statusCode) });
    requestDuration.observe({ frontend }, (performance.now() - started) / 1000);
  });
  // Health probes and scrapes are not worth a span each.
  const method = req.method ?? 'GET';
  // Calls are POSTs; a GET reads a listing or holds an event stream open (MCP's, the studio's): not worth a span.
  if (!tracingEnabled() || method === 'GET' || frontend === 'other' || frontend === 'metrics') return handle();
  const remote = parseTraceparent(req.headers.traceparent);
  const span = startSpan(`${method} ${path.startsWith('/tools/') ? '/tools/{name}' : path}`, {
    'http.request.method': method,
    'url.path': path,
    'forge.frontend': frontend,
    'rpc.system': frontend === 'mcp' ? 'jsonrpc' : frontend === 'a2a' ? 'jsonrpc' : undefined,
  }, { kind: 'server', parent: remote });
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setError(`HTTP ${res.statusCode}`);
    span.end();
  });
  return withSpan(span, handle, { frontend });
}
