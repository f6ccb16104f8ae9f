/**
 * What keeps a hostile client from starving the agent's HTTP server:
 * headers must arrive within a deadline, a request body must keep flowing
 * (an idle gap) and be complete within a deadline (a slow-loris body that
 * trickles one byte at a time is closed too), a body no route reads closes
 * its connection with the answer, open connections are capped,
 * and JSON is refused past a nesting depth before it is parsed (deep JSON
 * costs stack in every later walk, and no real request needs it).
 *
 * FORGE_HTTP_LIMITS ("headers=2s,body_idle=1s,body=3s,connections=10,json_depth=32")
 * overrides the defaults, for tight deployments and for tests.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { parseDuration } from '../duration.ts';
import { ForgeError } from '../diagnostics.ts';
import { ownValue } from '../own-value.ts';

export interface HttpLimits {
  headersTimeoutMs: number;
  /** Longest gap between two chunks of a request body. */
  bodyIdleTimeoutMs: number;
  /** Longest time to receive a whole request body. */
  bodyTimeoutMs: number;
  maxConnections: number;
  maxJsonDepth: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 30_000,
  bodyIdleTimeoutMs: 30_000,
  bodyTimeoutMs: 120_000,
  maxConnections: 1024,
  maxJsonDepth: 64,
};

const KEYS: Record<string, [keyof HttpLimits, 'duration' | 'count']> = {
  headers: ['headersTimeoutMs', 'duration'],
  body_idle: ['bodyIdleTimeoutMs', 'duration'],
  body: ['bodyTimeoutMs', 'duration'],
  connections: ['maxConnections', 'count'],
  json_depth: ['maxJsonDepth', 'count'],
};

export function httpLimits(overrides: Partial<HttpLimits> = {}, env: NodeJS.ProcessEnv = process.env): HttpLimits {
  const limits = { ...DEFAULT_HTTP_LIMITS };
  for (const part of (env.FORGE_HTTP_LIMITS ?? '').split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    const known = ownValue(KEYS, key);
    if (!known || !value) continue;
    const number = known[1] === 'duration' ? parseDuration(value) : Number(value);
    if (number !== undefined && Number.isInteger(number) && number > 0) limits[known[0]] = number;
  }
  return { ...limits, ...overrides };
}

/** node:http's own limits: the header and whole-request deadlines (checked often enough to matter) and the connection cap. */
export function serverOptions(limits: HttpLimits): { connectionsCheckingInterval: number; headersTimeout: number; requestTimeout: number } {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: requestDeadline(limits),
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

export function applyServerLimits(server: Server, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = requestDeadline(limits);
}

/**
 * node:http's deadline for receiving a whole request — headers and body, not the answer: a
 * stream (SSE, MCP) answers a request already received and stays open as long as it needs.
 * It is a backstop behind readBody's own deadlines (which answer first, with a JSON 408), for
 * a body no route reads while the route takes its time to answer.
 */
function requestDeadline(limits: HttpLimits): number {
  return limits.headersTimeoutMs + limits.bodyTimeoutMs;
}

/**
 * A body its route never reads (/healthz, a 404, a refusal) is drained by node:http after the
 * answer, at whatever pace the client sends it, on a connection kept alive for the next
 * request — a client trickling one byte at a time holds it forever, and the connection cap
 * turns a few hundred such clients into a lockout. So the answer to a request with a body
 * says `Connection: close` (and node closes it once sent) unless the route reads the body to
 * its end first (readBody), which restores keep-alive.
 */
export function closeUnlessBodyRead(req: IncomingMessage, res: ServerResponse): void {
  if (!hasBody(req)) return;
  const keepAlive = res.shouldKeepAlive;
  res.shouldKeepAlive = false;
  req.once('end', () => {
    if (!res.headersSent) res.shouldKeepAlive = keepAlive;
  });
}

/** The request carries a body (a length above 0, or chunks). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

export class JsonTooDeepError extends ForgeError {
  constructor(readonly maxDepth: number) {
    super('FORGE_JSON_TOO_DEEP', `the JSON body nests deeper than ${maxDepth} levels`);
  }
}

/** True when the JSON text nests objects/arrays deeper than `maxDepth` (strings are skipped; one linear pass). */
export function jsonNestsDeeperThan(body: Buffer, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** A path segment decoded, or undefined when its percent-encoding is malformed (a 400, not a 500). */
export function decodePathSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
