/**
 * What keeps a hostile client from starving the agent's HTTP server:
 * headers must arrive within a deadline, a request body must keep flowing
 * (an idle gap) and be complete within a deadline (a slow-loris body that
 * trickles one byte at a time is closed too), open connections are capped,
 * and JSON is refused past a nesting depth before it is parsed (deep JSON
 * costs stack in every later walk, and no real request needs it).
 *
 * FORGE_HTTP_LIMITS ("headers=2s,body_idle=1s,body=3s,connections=10,json_depth=32")
 * overrides the defaults, for tight deployments and for tests.
 */
import type { Server } from 'node:http';
import { parseDuration } from '../duration.ts';
import { ForgeError } from '../diagnostics.ts';

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
    const known = KEYS[key];
    if (!known || !value) continue;
    const number = known[1] === 'duration' ? parseDuration(value) : Number(value);
    if (number !== undefined && Number.isInteger(number) && number > 0) limits[known[0]] = number;
  }
  return { ...limits, ...overrides };
}

/** node:http's own limits: the header deadline (checked often enough to matter) and the connection cap. */
export function serverOptions(limits: HttpLimits): { connectionsCheckingInterval: number; headersTimeout: number; requestTimeout: number } {
  return {
    headersTimeout: limits.headersTimeoutMs,
    // Streams (SSE, MCP) stay open as long as they need; bodies have their own deadlines (readBody).
    requestTimeout: 0,
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

export function applyServerLimits(server: Server, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = 0;
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
