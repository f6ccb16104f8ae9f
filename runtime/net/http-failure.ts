/**
 * An HTTP client error as a tool's error result: an egress refusal names the
 * host, the rule and what to change; timeouts and network failures keep
 * their codes.
 */
import { fail, type ToolResult } from '../tools/model.ts';
import { EgressRefusedError } from './egress-policy.ts';
import { HttpError } from './http-client.ts';

export function httpFailure(err: unknown, what: string): ToolResult {
  if (err instanceof EgressRefusedError) return fail(err.code, `${what}: ${err.message}`, err.refusal.hint);
  if (err instanceof HttpError) return fail(err.code, `${what}: ${err.message}`);
  return fail('FORGE_HTTP_NETWORK', `${what}: ${(err as Error)?.message ?? String(err)}`);
}
