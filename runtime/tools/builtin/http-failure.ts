/** How the network tools report a request that did not get a response. */
import { EgressRefusedError } from '../../net/egress-policy.ts';
import { HttpError } from '../../net/http-client.ts';
import { fail, type ToolResult } from '../model.ts';

const HINTS: Partial<Record<HttpError['code'], string>> = {
  FORGE_HTTP_TIMEOUT: 'raise the timeout, or try again later',
  FORGE_HTTP_REDIRECTS: 'the server redirects in a loop, or too many times',
  FORGE_HTTP_URL: 'give an absolute http:// or https:// URL',
  FORGE_HTTP_NETWORK: 'check the host name and that the server is reachable',
};

export function httpFailure(err: unknown): ToolResult {
  if (err instanceof EgressRefusedError) return fail(err.code, err.message, `allow the host in forge.yaml's egress.allowed_domains if the agent should reach it`);
  if (err instanceof HttpError) return fail(err.code, err.message, HINTS[err.code]);
  throw err;
}

/** Whether a content type is text a model can read (as opposed to bytes to pass on as base64). */
export function isTextual(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type.startsWith('text/') || /[/+](json|xml|javascript|ecmascript|yaml|x-yaml|csv|x-www-form-urlencoded|graphql)$/.test(type) || type === 'application/x-ndjson';
}
