/**
 * The web search providers web_search can use, each as a request to build
 * and a response to read. Both take a bearer key and answer JSON.
 */

export type SearchProviderName = 'tavily' | 'perplexity';

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  published?: string;
  score?: number;
}

export interface SearchAnswer {
  answer?: string;
  results: SearchResult[];
}

export interface SearchProvider {
  name: SearchProviderName;
  keyVariable: string;
  baseUrlVariable: string;
  defaultBaseUrl: string;
  path: string;
  body(query: string, maxResults: number): unknown;
  read(data: unknown): SearchAnswer;
}

interface TavilyResponse {
  answer?: string | null;
  results?: { title?: string; url?: string; content?: string; score?: number; published_date?: string }[];
}

interface PerplexityResponse {
  results?: { title?: string; url?: string; snippet?: string; date?: string; last_updated?: string }[];
}

export const PROVIDERS: Record<SearchProviderName, SearchProvider> = {
  tavily: {
    name: 'tavily',
    keyVariable: 'TAVILY_API_KEY',
    baseUrlVariable: 'TAVILY_BASE_URL',
    defaultBaseUrl: 'https://api.tavily.com',
    path: '/search',
    body: (query, maxResults) => ({ query, max_results: maxResults, search_depth: 'basic', include_answer: true }),
    read(data) {
      const response = data as TavilyResponse;
      if (!Array.isArray(response.results)) throw new Error('the response has no "results" list');
      return {
        ...(response.answer ? { answer: response.answer } : {}),
        results: response.results.map((r) => ({
          title: r.title ?? '',
          url: r.url ?? '',
          snippet: r.content ?? '',
          ...(r.published_date ? { published: r.published_date } : {}),
          ...(typeof r.score === 'number' ? { score: r.score } : {}),
        })),
      };
    },
  },
  perplexity: {
    name: 'perplexity',
    keyVariable: 'PERPLEXITY_API_KEY',
    baseUrlVariable: 'PERPLEXITY_BASE_URL',
    defaultBaseUrl: 'https://api.perplexity.ai',
    path: '/search',
    body: (query, maxResults) => ({ query, max_results: maxResults }),
    read(data) {
      const response = data as PerplexityResponse;
      if (!Array.isArray(response.results)) throw new Error('the response has no "results" list');
      return {
        results: response.results.map((r) => ({
          title: r.title ?? '',
          url: r.url ?? '',
          snippet: r.snippet ?? '',
          ...(r.date || r.last_updated ? { published: (r.date ?? r.last_updated)! } : {}),
        })),
      };
    },
  },
};
