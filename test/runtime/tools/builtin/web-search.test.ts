import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { startServer, type TestServer } from '../../../helpers/http-server.ts';
import { tools } from '../../../helpers/tools.ts';

let tavily: TestServer;
let perplexity: TestServer;
let failing: TestServer;
const work = tempDir();

beforeAll(async () => {
  tavily = await startServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.headers.authorization !== 'Bearer tvly-good') {
      res.statusCode = 401;
      res.end('{"detail":"invalid key"}');
      return;
    }
    const body = JSON.parse(req.body) as { query: string; max_results: number };
    res.end(
      JSON.stringify({
        query: body.query,
        answer: `About ${body.query}`,
        results: Array.from({ length: body.max_results }, (_, i) => ({ title: `T${i}`, url: `https://t.example/${i}`, content: `tavily snippet ${i}`, score: 0.9 - i / 10, published_date: '2025-01-02' })),
      }),
    );
  });
  perplexity = await startServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const body = JSON.parse(req.body) as { query: string; max_results: number };
    res.end(JSON.stringify({ id: 'x', results: [{ title: 'P0', url: 'https://p.example/0', snippet: `perplexity on ${body.query}`, date: '2025-02-03' }] }));
  });
  failing = await startServer((req, res) => {
    if (req.url === '/rate/search') res.statusCode = 429;
    else if (req.url === '/broken/search') {
      res.setHeader('content-type', 'application/json');
      res.end('{"unexpected": true}');
      return;
    } else res.statusCode = 500;
    res.end('upstream trouble');
  });
});

const search = async (env: NodeJS.ProcessEnv, config: Record<string, unknown> = {}, args: Record<string, unknown> = { query: 'forge' }) =>
  (await tools(['web_search'], { workDir: work, env, config: { web_search: config } })).call('web_search', args);

describe('web_search', () => {
  it('searches Tavily with the key from the environment (base URL from the environment)', async () => {
    const result = await search({ TAVILY_API_KEY: 'tvly-good', TAVILY_BASE_URL: tavily.url }, {}, { query: 'build tools', max_results: 2 });
    expect(result).toEqual({
      ok: true,
      durationMs: expect.any(Number),
      value: {
        provider: 'tavily',
        query: 'build tools',
        answer: 'About build tools',
        results: [
          { title: 'T0', url: 'https://t.example/0', snippet: 'tavily snippet 0', published: '2025-01-02', score: 0.9 },
          { title: 'T1', url: 'https://t.example/1', snippet: 'tavily snippet 1', published: '2025-01-02', score: 0.8 },
        ],
      },
    });
    const sent = tavily.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', url: '/search' });
    expect(JSON.parse(sent.body)).toMatchObject({ query: 'build tools', max_results: 2 });
  });

  it('searches Perplexity when only its key is set (base URL from config)', async () => {
    const result = await search({ PERPLEXITY_API_KEY: 'pplx' }, { perplexity_base_url: perplexity.url });
    expect(result).toMatchObject({ ok: true, value: { provider: 'perplexity', results: [{ title: 'P0', snippet: 'perplexity on forge', published: '2025-02-03' }] } });
    expect(perplexity.requests.at(-1)!.headers.authorization).toBe('Bearer pplx');
  });

  it('prefers Tavily when both keys are set, and WEB_SEARCH_PROVIDER overrides that', async () => {
    const env = { TAVILY_API_KEY: 'tvly-good', PERPLEXITY_API_KEY: 'pplx', TAVILY_BASE_URL: tavily.url, PERPLEXITY_BASE_URL: perplexity.url };
    expect(await search(env)).toMatchObject({ ok: true, value: { provider: 'tavily' } });
    expect(await search({ ...env, WEB_SEARCH_PROVIDER: 'perplexity' })).toMatchObject({ ok: true, value: { provider: 'perplexity' } });
    expect(await search(env, { provider: 'perplexity' })).toMatchObject({ ok: true, value: { provider: 'perplexity' } });
  });

  it.each([
    [{}, {}, 'FORGE_WEB_SEARCH_KEY', 'TAVILY_API_KEY or PERPLEXITY_API_KEY'],
    [{ WEB_SEARCH_PROVIDER: 'perplexity', TAVILY_API_KEY: 'x' }, {}, 'FORGE_WEB_SEARCH_KEY', 'PERPLEXITY_API_KEY'],
    [{ WEB_SEARCH_PROVIDER: 'bing', TAVILY_API_KEY: 'x' }, {}, 'FORGE_WEB_SEARCH_PROVIDER', 'bing'],
  ])('refuses env %j clearly', async (env, config, code, text) => {
    expect(await search(env, config)).toMatchObject({ ok: false, error: { code, message: expect.stringContaining(text) } });
  });

  it('says when the provider refuses the key', async () => {
    expect(await search({ TAVILY_API_KEY: 'tvly-bad', TAVILY_BASE_URL: tavily.url })).toMatchObject({ ok: false, error: { code: 'FORGE_WEB_SEARCH_AUTH', message: expect.stringContaining('TAVILY_API_KEY') } });
  });

  it.each([
    ['rate', 'FORGE_WEB_SEARCH_RATE_LIMIT'],
    ['down', 'FORGE_WEB_SEARCH_FAILED'],
    ['broken', 'FORGE_WEB_SEARCH_FAILED'],
  ])('reports a provider that is %s', async (path, code) => {
    expect(await search({ TAVILY_API_KEY: 'k' }, { tavily_base_url: `${failing.url}/${path}` })).toMatchObject({ ok: false, error: { code } });
  });

  it('never puts the key in a result', async () => {
    const result = await search({ TAVILY_API_KEY: 'tvly-bad', TAVILY_BASE_URL: tavily.url });
    expect(JSON.stringify(result)).not.toContain('tvly-bad');
  });
});
