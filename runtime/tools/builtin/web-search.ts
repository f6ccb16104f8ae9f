import { httpFailure } from '../../net/http-failure.ts';
import { fail, ok, type ToolResult } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { PROVIDERS, type SearchProvider, type SearchProviderName } from './web/search-providers.ts';

export default defineBuiltin({
  spec: {
    name: 'web_search',
    description: [
      'Search the web and return ranked results (title, URL, snippet, and a publication date when known); Tavily also returns a short `answer`.',
      'Provider: the WEB_SEARCH_PROVIDER environment variable (tavily or perplexity), else config `provider`, else whichever of TAVILY_API_KEY and PERPLEXITY_API_KEY is set (Tavily first). The key is read from the agent\'s environment only. The API root can be changed with config tavily_base_url / perplexity_base_url or the TAVILY_BASE_URL / PERPLEXITY_BASE_URL variables.',
      'A missing key, a refused key and a provider error are errors that say which. Requests obey the agent\'s egress rules.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read', 'network'],
    // Above the longest configurable search timeout, which is the one that applies.
    timeoutMs: 125_000,
    inputSchema: {
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 2000, description: 'What to search for.' },
        max_results: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'Most results to return.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      provider: { enum: ['tavily', 'perplexity'], description: 'The provider to use (WEB_SEARCH_PROVIDER overrides it).' },
      tavily_base_url: { type: 'string', pattern: '^https?://', description: 'Tavily API root (default https://api.tavily.com).' },
      perplexity_base_url: { type: 'string', pattern: '^https?://', description: 'Perplexity API root (default https://api.perplexity.ai).' },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: 120, default: 30, description: 'Seconds for one search.' },
    },
  },
  // The chosen provider, or each one the tool may fall back to by key; a base URL written in config is the one reached.
  endpoints: (config) =>
    (config.provider ? [PROVIDERS[config.provider]] : Object.values(PROVIDERS)).map((provider) => {
      const configured = configuredBaseUrl(config, provider);
      return configured ? { url: configured, explicit: true, key: `${provider.name}_base_url` } : { url: provider.defaultBaseUrl, explicit: false };
    }),
  create(host) {
    const choose = (): SearchProvider | ToolResult => {
      const requested = host.env.WEB_SEARCH_PROVIDER?.trim().toLowerCase() || host.config.provider;
      if (requested) {
        const provider = PROVIDERS[requested as SearchProviderName];
        if (!provider) return fail('FORGE_WEB_SEARCH_PROVIDER', `unknown web search provider "${requested}" (from WEB_SEARCH_PROVIDER)`, 'use tavily or perplexity');
        if (!host.env[provider.keyVariable]) return missingKey(provider.keyVariable, `the provider is ${provider.name}`);
        return provider;
      }
      const byKey = Object.values(PROVIDERS).find((p) => host.env[p.keyVariable]);
      return byKey ?? missingKey('TAVILY_API_KEY or PERPLEXITY_API_KEY', 'no search provider key is set');
    };
    return {
      async execute(args, ctx) {
        const { query, max_results: maxResults } = args;
        const provider = choose();
        if ('ok' in provider) return provider;
        const base = (configuredBaseUrl(host.config, provider) ?? host.env[provider.baseUrlVariable] ?? provider.defaultBaseUrl).replace(/\/+$/, '');
        let response;
        try {
          response = await host.http.request({
            url: `${base}${provider.path}`,
            method: 'POST',
            headers: { authorization: `Bearer ${host.env[provider.keyVariable]}`, 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify(provider.body(query, maxResults)),
            timeoutMs: host.config.timeout * 1000,
            signal: ctx.signal,
          });
        } catch (err) {
          return httpFailure(err, `web_search with ${provider.name}`);
        }
        const text = response.body.toString('utf8');
        if (response.status === 401 || response.status === 403) {
          return fail('FORGE_WEB_SEARCH_AUTH', `${provider.name} refused the key in ${provider.keyVariable} (${response.status})`, `check ${provider.keyVariable}`);
        }
        if (response.status === 429) return fail('FORGE_WEB_SEARCH_RATE_LIMIT', `${provider.name} is rate limiting the searches (429)`, 'wait a little and search again');
        if (response.status >= 400) return fail('FORGE_WEB_SEARCH_FAILED', `${provider.name} answered ${response.status}: ${text.slice(0, 300)}`);
        try {
          const answer = provider.read(JSON.parse(text));
          return ok({ provider: provider.name, query, ...answer, results: answer.results.slice(0, maxResults) });
        } catch (err) {
          return fail('FORGE_WEB_SEARCH_FAILED', `${provider.name} sent a response that cannot be read: ${(err as Error).message}`);
        }
      },
    };
  },
});

function missingKey(variable: string, why: string): ToolResult {
  return fail('FORGE_WEB_SEARCH_KEY', `${why}, and ${variable} is not set`, `set ${variable} in the agent's environment (never in forge.yaml)`);
}

function configuredBaseUrl(config: { tavily_base_url?: string; perplexity_base_url?: string }, provider: SearchProvider): string | undefined {
  return provider.name === 'tavily' ? config.tavily_base_url : config.perplexity_base_url;
}
