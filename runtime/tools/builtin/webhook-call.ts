/**
 * webhook_call: POSTs a JSON payload to a webhook and returns the status and
 * the (capped) response body. forge.yaml can pin the webhooks by name —
 *
 *   tools:
 *     - name: webhook_call
 *       config:
 *         webhooks:
 *           deploy: https://ci.example.com/hooks/deploy
 *           alert: { url: https://alerts.example.com/in, headers: { X-Token: "${ALERT_TOKEN}" } }
 *
 * — and then the model passes a name, never a URL. Without pinned webhooks
 * it passes the URL. Either way the request goes through the egress policy.
 */
import { httpFailure } from '../../net/http-failure.ts';
import { MAX_TIMEOUT_MS } from '../../net/http-client.ts';
import { expandSecretHeaders, expandSecretUrl } from '../adapters/env-template.ts';
import { responseValue } from '../adapters/response-value.ts';
import { cap, ERROR_EXCERPT_CHARS } from '../adapters/text-cap.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin, type ValidatedBy } from './define.ts';

const baseInput = {
  payload: { description: 'The JSON payload to send (any JSON value).' },
  headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra HTTP headers to send.' },
  timeout_ms: { type: 'integer', minimum: 100, maximum: MAX_TIMEOUT_MS, description: 'Give up after this many milliseconds.' },
} as const;

/** Without pinned webhooks the model gives the URL. */
const URL_INPUT = {
  type: 'object',
  properties: { url: { type: 'string', format: 'uri', description: 'The webhook URL (http or https).' }, ...baseInput },
  required: ['url', 'payload'],
  additionalProperties: false,
} as const;

/** With pinned webhooks the model names one of them (the names are the enum), and cannot give a URL. */
function pinnedInput(names: string[]) {
  return {
    type: 'object',
    properties: { webhook: { type: 'string', enum: names, description: 'Which webhook to call.' }, ...baseInput },
    required: ['webhook', 'payload'],
    additionalProperties: false,
  } as const;
}

/** The build records one of the two schemas (specFor), so a call brings the arguments of one or the other. */
type WebhookArgs = ValidatedBy<typeof URL_INPUT> | ValidatedBy<ReturnType<typeof pinnedInput>>;

export default defineBuiltin({
  spec: {
    name: 'webhook_call',
    description: 'POST a JSON payload to a webhook URL and return the HTTP status and the response body.',
    category: 'adapter',
    tags: ['write'],
    inputSchema: URL_INPUT,
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      webhooks: {
        type: 'object',
        description: 'Pinned webhooks by name: the model passes the name, not a URL.',
        propertyNames: { pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        additionalProperties: {
          anyOf: [
            { type: 'string', pattern: '^https?://' },
            {
              type: 'object',
              required: ['url'],
              additionalProperties: false,
              properties: { url: { type: 'string', pattern: '^https?://' }, headers: { type: 'object', additionalProperties: { type: 'string' } } },
            },
          ],
        },
        default: {},
      },
      timeout_ms: { type: 'integer', minimum: 100, maximum: MAX_TIMEOUT_MS, default: 10_000 },
      max_response_bytes: { type: 'integer', minimum: 1, maximum: 10 * 1024 * 1024, default: 256 * 1024 },
    },
  },
  /** With pinned webhooks the model chooses among their names (an enum), and cannot give a URL. */
  specFor(config) {
    const names = Object.keys(config.webhooks ?? {}).sort();
    if (names.length === 0) return {};
    return { inputSchema: pinnedInput(names), description: `POST a JSON payload to one of these webhooks — ${names.join(', ')} — and return the HTTP status and the response body.` };
  },
  endpoints: (config) => Object.entries(config.webhooks ?? {}).map(([name, target]) => ({ url: typeof target === 'string' ? target : target.url, explicit: true, key: `webhooks.${name}` })),
  create: ({ config, http, env }) => ({
    async execute(args: WebhookArgs, ctx) {
      // The input schema admits exactly one: `webhook`, one of the pinned names, when there are any; else `url`.
      const webhook = 'webhook' in args ? args.webhook : undefined;
      const target = 'webhook' in args ? config.webhooks[args.webhook] : args.url;
      let url = typeof target === 'string' ? target : target.url;
      let pinnedHeaders: Record<string, string>;
      try {
        // A pinned webhook's URL and headers are forge.yaml's: their ${VAR}s are read now. A URL the model gives is taken as it is.
        if (webhook !== undefined) url = expandSecretUrl(url, env, `webhooks.${webhook}.url`);
        pinnedHeaders = typeof target === 'string' ? {} : expandSecretHeaders(target.headers, env, `webhooks.${webhook}.headers`);
      } catch (err) {
        // A variable the URL or the headers name is not set (MissingVariableError).
        return fail('FORGE_WEBHOOK_ENV', `webhook "${webhook}": ${(err as Error).message}`, 'set it in the environment the agent runs in');
      }

      let response;
      try {
        response = await http.request({
          url,
          method: 'POST',
          headers: { ...(args.headers ?? {}), ...pinnedHeaders, 'content-type': 'application/json', accept: 'application/json, */*;q=0.5' },
          // Pinned headers come from forge.yaml, usually with a ${TOKEN}: they stay with the webhook's origin.
          credentialHeaders: Object.keys(pinnedHeaders),
          body: JSON.stringify(args.payload ?? null),
          timeoutMs: args.timeout_ms ?? config.timeout_ms,
          maxResponseBytes: config.max_response_bytes,
          signal: ctx.signal,
        });
      } catch (err) {
        // A URL the schema's "uri" format lets through may still be one no client can use (port 99999).
        return httpFailure(err, `webhook_call to ${webhook ?? (URL.canParse(url) ? new URL(url).host : url)}`);
      }
      if (response.status >= 400) {
        const text = response.body.toString('utf8');
        return fail('FORGE_WEBHOOK_STATUS', `webhook ${webhook ?? url} answered ${response.status} ${response.statusText}${text ? `: ${cap(text, ERROR_EXCERPT_CHARS)}` : ''}`);
      }
      return ok({ status: response.status, body: responseValue(response), ...(response.truncated ? { truncated: true } : {}) });
    },
  }),
});
