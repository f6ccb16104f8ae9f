/**
 * Routes beside the protocol endpoints: /metrics (Prometheus text format,
 * behind the bearer token unless forge.yaml says `metrics: public`) and the
 * routes a front end adds (the studio of `forge run --dev`), which check
 * the token themselves since a page cannot send it when it is opened.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '../telemetry/forge-metrics.ts';
import { isAuthorized, refuseUnauthorized, type AuthSettings } from './auth.ts';

/** Answers a request and returns true, or returns false to let the server route it. */
export type ExtraRoutes = (req: IncomingMessage, res: ServerResponse, path: string) => boolean | Promise<boolean>;

export async function serveObservabilityRoutes(req: IncomingMessage, res: ServerResponse, path: string, options: { auth: AuthSettings; metricsPublic?: boolean; extraRoutes?: ExtraRoutes }): Promise<boolean> {
  if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
    if (!options.metricsPublic && !isAuthorized(req, options.auth)) {
      refuseUnauthorized(res, 'send "Authorization: Bearer <token>", or set `metrics: public` in forge.yaml for a scraper without one');
      return true;
    }
    const text = metrics.render();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
    return true;
  }
  return options.extraRoutes ? options.extraRoutes(req, res, path) : false;
}
