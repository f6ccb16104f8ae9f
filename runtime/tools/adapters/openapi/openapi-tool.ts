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
import { rememberSecret } from '../../../known-secrets.ts';
import { responseValue } from '../response-value.ts';
import type { ApiSettings, OpenApiBinding } from '../settings.ts';
import { cap, ERROR_EXCERPT_CHARS } from '../text-cap.ts';
import { buildApiRequest, type ApiRequest } from './request.ts';

export interface OpenApiContext {
  http: HttpClient;
  env: NodeJS.ProcessEnv;
}

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
          credentialHeaders: credentialHeaders(api),
          body: request.body,
          timeoutMs: api.timeout_ms,
          signal: toolCtx.signal,
        });
      } catch (err) {
        return httpFailure(err, `${spec.name} (${request.method} ${request.url.host}${binding.path})`);
      }
      const body = responseValue(response);
      if (response.status >= 400) {
        // The whole body goes to details when the message quotes only its start.
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        return fail(
          'FORGE_API_STATUS',
          `${spec.name}: ${request.method} ${request.url.pathname} answered ${response.status} ${response.statusText}${text ? `: ${cap(text, ERROR_EXCERPT_CHARS)}` : ''}`,
          response.status === 401 || response.status === 403 ? `check the credentials of API "${api.name}" (auth: in forge.yaml)` : undefined,
          text.length > ERROR_EXCERPT_CHARS ? cap(text) : undefined,
        );
      }
      const headers = Object.fromEntries(Object.entries(response.headers).filter(([k]) => k !== 'set-cookie'));
      return ok({ status: response.status, headers, body, ...(response.truncated ? { truncated: true } : {}) });
    },
  };
}

/** The header an `api_key` scheme puts the key in, whatever its name: a redirect to another origin must not carry it. */
function credentialHeaders(api: ApiSettings): string[] {
  return api.auth?.type === 'api_key' && api.auth.in !== 'query' ? [api.auth.name] : [];
}

/** Adds the API's credentials; returns what is missing, if anything. */
function applyAuth(api: ApiSettings, request: ApiRequest, env: NodeJS.ProcessEnv): string | undefined {
  const auth = api.auth;
  if (!auth) return undefined;
  const missing = (name: string) => `environment variable ${name} is not set (auth of API "${api.name}")`;
  switch (auth.type) {
    case 'bearer': {
      const token = env[auth.token_env];
      if (!token) return missing(auth.token_env);
      rememberSecret(token);
      request.headers.authorization = `Bearer ${token}`;
      return undefined;
    }
    case 'api_key': {
      const value = env[auth.value_env];
      if (!value) return missing(auth.value_env);
      rememberSecret(value);
      if (auth.in === 'query') request.url.searchParams.set(auth.name, value);
      else request.headers[auth.name.toLowerCase()] = value;
      return undefined;
    }
    case 'basic': {
      const user = env[auth.username_env];
      const password = env[auth.password_env];
      if (user === undefined) return missing(auth.username_env);
      if (password === undefined) return missing(auth.password_env);
      const encoded = Buffer.from(`${user}:${password}`).toString('base64');
      rememberSecret(password);
      rememberSecret(encoded);
      request.headers.authorization = `Basic ${encoded}`;
      return undefined;
    }
  }
}
