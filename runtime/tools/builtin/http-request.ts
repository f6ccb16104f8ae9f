import { DEFAULT_MAX_RESPONSE_BYTES, MAX_TIMEOUT_MS } from '../../net/http-client.ts';
import { httpFailure } from '../../net/http-failure.ts';
import { ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { decodeText, isTextual } from '../../net/text-content.ts';

export default defineBuiltin({
  spec: {
    name: 'http_request',
    description: [
      'Send an HTTP request (GET, POST, PUT, PATCH, DELETE, HEAD) and return the status, headers and body.',
      'A `body` that is not a string is sent as JSON (with Content-Type: application/json unless a content type is given). Redirects are followed (at most 10); credential headers (Authorization, Cookie, Proxy-Authorization, API-key headers such as X-Api-Key, and any whose name mentions an API key, token, secret, password, auth, credential, session or signature) are dropped when a redirect leaves the original origin.',
      'The whole exchange has one `timeout` (seconds, default 30, at most 300). The body is cut at 1 MiB (config max_response_bytes), with `truncated` set; a text body (text/*, JSON, XML...) comes back as text, decoded in its charset, anything else as base64 (`body_encoding`). gzip, deflate and br bodies are decoded. An HTTP error status is a normal result, not a failure. Requests obey the agent\'s egress rules.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read', 'network'],
    timeoutMs: MAX_TIMEOUT_MS + 5_000,
    inputSchema: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: { type: 'string', minLength: 1, description: 'Absolute http:// or https:// URL.' },
        method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'], default: 'GET', description: 'HTTP method.' },
        headers: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'Request headers.' },
        body: { description: 'Request body: a string is sent as is, anything else as JSON.' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TIMEOUT_MS / 1000, default: 30, description: 'Seconds for the whole exchange, redirects included.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      max_response_bytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: DEFAULT_MAX_RESPONSE_BYTES, description: 'Response bodies are cut at this size.' },
    },
  },
  create(host) {
    return {
      async execute(args, ctx) {
        const headers: Record<string, string> = { 'user-agent': 'forge-agent', ...lowerCased(args.headers) };
        let body: string | undefined;
        if (args.body !== undefined && args.body !== null) {
          if (typeof args.body === 'string') body = args.body;
          else {
            body = JSON.stringify(args.body);
            headers['content-type'] ??= 'application/json';
          }
        }
        let response;
        try {
          response = await host.http.request({
            url: args.url,
            method: args.method,
            headers,
            body,
            timeoutMs: Math.round(args.timeout * 1000),
            maxResponseBytes: host.config.max_response_bytes,
            signal: ctx.signal,
          });
        } catch (err) {
          return httpFailure(err, `http_request ${args.method} ${args.url}`);
        }
        const contentType = response.headers['content-type'];
        const text = isTextual(contentType) || (!contentType && isUtf8(response.body));
        return ok({
          status: response.status,
          status_text: response.statusText,
          url: response.url,
          redirects: response.redirects,
          headers: response.headers,
          body: text ? decodeText(response.body, contentType) : response.body.toString('base64'),
          body_encoding: text ? 'utf8' : 'base64',
          bytes: response.body.length,
          truncated: response.truncated,
        });
      },
    };
  },
});

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
