/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the
 * `traceparent` header that carries a trace from one process to the next.
 * Version 00 only; a malformed header is ignored (a new trace starts), as
 * the specification asks.
 */
import { createRequire } from 'node:module';

export interface SpanContext {
  traceId: string; // 32 hex
  spanId: string; // 16 hex
  sampled: boolean;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

export function parseTraceparent(header: string | string[] | undefined): SpanContext | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!match || ALL_ZERO.test(match[1]) || ALL_ZERO.test(match[2])) return undefined;
  return { traceId: match[1], spanId: match[2], sampled: (parseInt(match[3], 16) & 1) === 1 };
}

export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

// Ids come from a pool of random bytes refilled 4 KiB at a time: one
// randomBytes call per few hundred spans instead of one per span. The pool
// (and node:crypto) is made at the first id, not when this module loads:
// the runtime's assembly imports it through the HTTP client, and a process
// that makes no span (`forge tool run`, a one-off `call`) would pay for it.
const POOL_SIZE = 4096;
let pool: Buffer | undefined;
let offset = POOL_SIZE;

function randomHex(bytes: number): string {
  if (!pool || offset + bytes > POOL_SIZE) {
    pool = (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(POOL_SIZE);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

export function newTraceId(): string {
  return randomHex(16);
}

export function newSpanId(): string {
  return randomHex(8);
}
