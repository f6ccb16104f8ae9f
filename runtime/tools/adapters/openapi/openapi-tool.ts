/**
 * An OpenAPI operation as a running Forge tool: builds the request from the
 * arguments, adds the API's credentials from the environment, sends it
 * through the runtime's HTTP client (egress policy, timeout, capped body)
 * and returns status, headers and body — JSON parsed when the response is
 * JSON. A 4xx or 5xx answer is a tool error carrying the body, which usually
 * says what was wrong.
 */
import type { HttpClient, HttpResponse } from '../../../net/http-client.ts';
import { httpFailure } from '../../../net/http-failure.ts';
import { fail, ok, type Tool, type ToolSpec } from '../../model.ts';
import { cap, MAX_RESULT_CHARS } from '../text-cap.ts';
import type { ApiAuth, ApiSettings, OpenApiBinding } from '../settings.ts';
import { buildApiRequest, type ApiRequest } from './request.ts';

export interface OpenApiContext {
  http: HttpClient;
  env: NodeJS.ProcessEnv;
}

const MAX_RESPONSE_BYTES = 1024 * 1024;
/** How much of an error response the message quotes (the whole body is in details). */
const ERROR_EXCERPT = 1_000;

export function createOpenApiTool(spec: ToolSpec, api: ApiSettings, ctx: OpenApiContext): Tool {
  const binding = spec.adapter as OpenApiBinding;
  return {
    ...spec,
    async execute(args, toolCtx) {
      let request: ApiRequest;
      try {
        request = buildApiRequest(binding, api.base_url, args as Record<string, unknown>);
      } catch (err) {
        return fail('FORGE_API_REQUEST', `${spec.name}: cannot build the request: ${(err as Error).message}`);
      }
      const authProblem = applyAuth(api, request, ctx.env);
      if (authProblem) return fail('FORGE_API_AUTH', `${spec.name}: ${authProblem}`, `set it in the environment the agent runs in`);

      let response: HttpResponse;
      try {
        response = await ctx.http.request({
          url: request.url,
          method: request.method,
          headers: { accept: 'application/json, */*;q=0.5', ...request.headers },
          body: request.body,
          timeoutMs: api.timeout_ms,
          maxResponseBytes: MAX_RESPONSE_BYTES,
          signal: toolCtx.signal,
        });
      } catch (err) {
        return httpFailure(err, `${spec.name} (${request.method} ${request.url.host}${binding.path})`);
      }
      const body = readBody(response);
      if (response.status >= 400) {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        return fail(
          'FORGE_API_STATUS',
          `${spec.name}: ${request.method} ${request.url.pathname} answered ${response.status} ${response.statusText}${text ? `: ${cap(text, ERROR_EXCERPT)}` : ''}`,
          response.status === 401 || response.status === 403 ? `check the credentials of API "${api.name}" (auth: in forge.yaml)` : undefined,
          text.length > ERROR_EXCERPT ? cap(text, MAX_RESULT_CHARS) : undefined,
        );
      }
      const headers = Object.fromEntries(Object.entries(response.headers).filter(([k]) => k !== 'set-cookie'));
      return ok({ status: response.status, headers, body, ...(response.truncated ? { truncated: true } : {}) });
    },
  };
}

/** Adds the API's credentials; returns what is missing, if anything. */
function applyAuth(api: ApiSettings, request: ApiRequest, env: NodeJS.ProcessEnv): string | undefined {
  const auth: ApiAuth | undefined = api.auth;
  if (!auth) return undefined;
  const read = (name: string) => env[name];
  const missing = (name: string) => `environment variable ${name} is not set (auth of API "${api.name}")`;
  switch (auth.type) {
    case 'bearer': {
      const token = read(auth.token_env);
      if (!token) return missing(auth.token_env);
      request.headers.authorization = `Bearer ${token}`;
      return undefined;
    }
    case 'api_key': {
      const value = read(auth.value_env);
      if (!value) return missing(auth.value_env);
      if (auth.in === 'query') request.url.searchParams.set(auth.name, value);
      else request.headers[auth.name.toLowerCase()] = value;
      return undefined;
    }
    case 'basic': {
      const user = read(auth.username_env);
      const password = read(auth.password_env);
      if (user === undefined) return missing(auth.username_env);
      if (password === undefined) return missing(auth.password_env);
      request.headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      return undefined;
    }
  }
}

function readBody(response: HttpResponse): unknown {
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  if (response.body.length === 0) return '';
  if (/\bjson\b|\+json/.test(type) && !response.truncated) {
    try {
      return JSON.parse(response.body.toString('utf8'));
    } catch {
      // Not the JSON it claims to be: give the text.
    }
  }
  if (type && !/^text\/|json|xml|javascript|x-www-form-urlencoded/.test(type)) {
    return `[binary body: ${type}, ${response.body.length} bytes]`;
  }
  return cap(response.body.toString('utf8'), MAX_RESULT_CHARS);
}
