/**
 * An HTTP client error as a tool's error result: an egress refusal names the
 * host, the rule and what to change; timeouts and network failures keep
 * their codes, with what to try.
 */
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import type { ToolResult } from '../tools/model.ts';
import { EgressRefusedError } from './egress-policy.ts';
import { HttpError } from './http-client.ts';

// The result is written out here rather than made with tools/model's fail(): net/ sits below tools/.
function fail(code: DiagnosticCode, message: string, hint?: string): ToolResult {
  return { ok: false, error: { code, message, ...(hint ? { hint } : {}) } };
}

const HINTS: Partial<Record<HttpError['code'], string>> = {
  FORGE_HTTP_TIMEOUT: 'raise the timeout, or try again later',
  FORGE_HTTP_REDIRECTS: 'the server redirects in a loop, or too many times',
  FORGE_HTTP_URL: 'give an absolute http:// or https:// URL',
  FORGE_HTTP_NETWORK: 'check the host name and that the server is reachable',
};

/** `what` names the request in the message: "webhook_call to hooks.example.com". */
export function httpFailure(err: unknown, what: string): ToolResult {
  if (err instanceof EgressRefusedError) return fail(err.code, `${what}: ${err.message}`, err.refusal.hint);
  if (err instanceof HttpError) return fail(err.code, `${what}: ${err.message}`, HINTS[err.code]);
  return fail('FORGE_HTTP_NETWORK', `${what}: ${(err as Error)?.message ?? String(err)}`, HINTS.FORGE_HTTP_NETWORK);
}
