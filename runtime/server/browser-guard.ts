/**
 * What keeps a web page from driving the agent through its visitor's
 * browser. With a bearer token a page has nothing to send: a browser never
 * attaches the token by itself. Without one (`--no-auth`, loopback only)
 * any page could call it: a CORS "simple" request (POST, `text/plain`, no
 * preflight) to 127.0.0.1 runs a tool unseen, and a page whose own DNS name
 * is rebound to 127.0.0.1 reads every answer as same-origin. So without a
 * token the Host must be a loopback name (a rebound name is not), an
 * Origin, when sent, must be the agent's own, and a request body must be
 * `application/json` (a simple request cannot send that type) — the studio's
 * too, whose /studio/api/approve answers the agent's approvals. MCP's
 * Streamable HTTP spec asks every server to check Origin, so /mcp checks it
 * with a token too; the SDK clients, curl and scripts send no Origin.
 */
import type { IncomingMessage } from 'node:http';
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import { hasBody } from './http-limits.ts';

export interface Refusal {
  status: 403 | 415;
  code: DiagnosticCode;
  message: string;
  hint: string;
}

export interface GuardSettings {
  /** No bearer token (`--no-auth`): the agent is bound to loopback and open to anything that reaches it. */
  open: boolean;
  /** The URL clients reach the agent at (its origin is the agent's own too). */
  publicUrl?: string;
}

/** Why a request that may come from a web page is refused, or undefined to serve it. */
export function browserRefusal(req: IncomingMessage, path: string, settings: GuardSettings): Refusal | undefined {
  const host = req.headers.host;
  if (settings.open && host !== undefined && !isLoopbackHost(host)) {
    return {
      status: 403,
      code: 'FORGE_HOST_REFUSED',
      message: `the Host header ${JSON.stringify(host)} is not a loopback name, and this agent has no token (--no-auth)`,
      hint: 'call it as 127.0.0.1, localhost or [::1]; to reach it by another name, serve it with a token (drop --no-auth)',
    };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && (settings.open || path === '/mcp') && !isOwnOrigin(origin, host, settings.publicUrl)) {
    return {
      status: 403,
      code: 'FORGE_ORIGIN_REFUSED',
      message: `a request from the web page at ${JSON.stringify(origin)} is refused: it is not the agent's own origin`,
      hint: 'call the agent from a script or an MCP/A2A client (they send no Origin), or from a page it serves itself',
    };
  }
  if (settings.open && needsJson(req, path) && !isJson(req.headers['content-type'])) {
    return {
      status: 415,
      code: 'FORGE_CONTENT_TYPE',
      message: `the request body is ${JSON.stringify(req.headers['content-type'] ?? 'untyped')}, not application/json`,
      hint: 'send the header "Content-Type: application/json" (curl -H "content-type: application/json")',
    };
  }
  return undefined;
}

/**
 * A POST to an endpoint that reads its body as JSON (REST calls, MCP, A2A, the studio's chat and
 * approvals) with a body, or with a content type (a form with no fields posts an empty one).
 * A script's POST without a body and without a type (curl -X POST) is served.
 */
function needsJson(req: IncomingMessage, path: string): boolean {
  if (req.method !== 'POST' || (!hasBody(req) && req.headers['content-type'] === undefined)) return false;
  return path === '/mcp' || path === '/a2a' || path === '/' || path.startsWith('/tools/') || path.startsWith('/studio/api/');
}

/** application/json, with any parameters (charset=utf-8, charset=UTF8 ...): a browser's form or text/plain post never is. */
function isJson(contentType: string | undefined): boolean {
  return /^application\/json\s*(;.*)?$/is.test(contentType ?? '');
}

/** localhost, 127.0.0.0/8 or [::1], with any port. */
export function isLoopbackHost(host: string): boolean {
  const name = hostnameOf(host);
  return name === 'localhost' || name === '[::1]' || (name !== undefined && /^127(\.\d{1,3}){3}$/.test(name));
}

/** The Origin names the host the request was sent to (same-origin), or the agent's public URL. */
function isOwnOrigin(origin: string, host: string | undefined, publicUrl: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file:// page) and garbage
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (publicUrl && sameOrigin(url, publicUrl)) return true;
  if (host === undefined) return false;
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  const hostUrl = parseHost(host);
  return hostUrl !== undefined && hostUrl.hostname === url.hostname && (hostUrl.port || defaultPort) === (url.port || defaultPort);
}

function sameOrigin(url: URL, other: string): boolean {
  try {
    return new URL(other).origin === url.origin;
  } catch {
    return false;
  }
}

function hostnameOf(host: string): string | undefined {
  return parseHost(host)?.hostname;
}

/** A Host header as a URL ("http://name:port"), or undefined for one that is no host and port. */
export function parseHost(host: string): URL | undefined {
  try {
    const url = new URL(`http://${host}`);
    // "evil.example/x@127.0.0.1" and the like are no host header.
    return url.host.toLowerCase() === host.toLowerCase().replace(/:80$/, '') ? url : undefined;
  } catch {
    return undefined;
  }
}
