/**
 * `fetch:HOST` in a forged tool's allowlist: the code's fetch goes through
 * the host's HTTP client, so the egress policy still decides; a host off the
 * allowlist is refused before any request is made, whether the code names it
 * or a redirect does.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import type { ForgeResult } from '../../../../runtime/tools/emergent/forge-request.ts';
import { startServer } from '../../../helpers/http-server.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools } from '../../../helpers/tools.ts';

const server = await startServer((req, res) => res.end(`hello from ${req.url}`));
afterAll(() => new Promise<void>((resolve) => server.server.close(() => resolve())));

const fetcher = (allowlist: string[]) => ({
  name: 'fetch_greeting',
  description: 'Fetch a greeting.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  outputSchema: { type: 'object' },
  implementation: { mode: 'sandbox', allowlist, code: `async function execute(input) { try { const r = await fetch("${server.url}" + input.path); return { status: r.status, text: r.text }; } catch (e) { return { error: e.message }; } }` },
  testCases: [{ input: { path: '/hi' }, expectedOutput: { status: 200, text: 'hello from /hi' } }],
});

async function forgeWith(egress: Parameters<typeof createEgressPolicy>[0], allowlist: string[]) {
  const h = await tools(['forge_tool'], { workDir: tempDir(), http: new HttpClient(createEgressPolicy(egress)) });
  const result = await h.registry.execute('forge_tool', fetcher(allowlist), { session: 'context:f' });
  return (result as { value: ForgeResult }).value;
}

describe('fetch:HOST', () => {
  it('reaches an allowlisted host the egress policy allows', async () => {
    const result = await forgeWith({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }, ['fetch:127.0.0.1']);
    expect(result.errors).toEqual([]);
    expect(result.success).toBe(true);
    expect(server.requests.map((r) => r.url)).toContain('/hi');
  });

  it('is still refused by the egress policy', async () => {
    const before = server.requests.length;
    const result = await forgeWith({ mode: 'deny-all', allowed_domains: [] }, ['fetch:127.0.0.1']);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.testResults[0].actual)).toMatch(/egress|not allowed|denied/i);
    expect(server.requests.length).toBe(before);
  });

  it('refuses a host that is not on the allowlist, before any request', async () => {
    const before = server.requests.length;
    const result = await forgeWith({ mode: 'open', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }, ['fetch:example.com']);
    expect(result.testResults[0].actual).toEqual({ error: 'fetch to 127.0.0.1 is not in the allowlist (allowed: example.com)' });
    expect(server.requests.length).toBe(before);
  });
});

// Three loopback addresses stand for three machines the egress policy allows; the tool lists two of them.
const internal = await startServer((req, res) => res.end(`internal data at ${req.url}`), '127.0.0.2');
const partner = await startServer((req, res) => (req.url === '/to-internal' ? res.writeHead(302, { location: `${internal.url}/secret` }).end() : res.end(`partner page ${req.url}`)), '127.0.0.3');
const front = await startServer((req, res) => {
  const targets: Record<string, string> = { '/to-internal': `${internal.url}/secret`, '/to-partner': `${partner.url}/landing`, '/via-partner': `${partner.url}/to-internal` };
  return targets[req.url ?? ''] ? res.writeHead(302, { location: targets[req.url ?? ''] }).end() : res.end('front');
});
const egress = { mode: 'allowlist' as const, allowed_domains: [], allowed_addresses: ['127.0.0.1', '127.0.0.2', '127.0.0.3'] };

describe('fetch:HOST and redirects', () => {
  /** Forges a tool allowed to fetch from 127.0.0.1 and 127.0.0.3 whose code fetches `url`; answers what its code got. */
  async function fetchThroughTool(url: string): Promise<unknown> {
    const h = await tools(['forge_tool'], { workDir: tempDir(), http: new HttpClient(createEgressPolicy(egress)) });
    const result = await h.registry.execute('forge_tool', {
      name: 'fetch_url',
      description: 'Fetch a URL.',
      inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
      outputSchema: { type: 'object' },
      implementation: { mode: 'sandbox', allowlist: ['fetch:127.0.0.1', 'fetch:127.0.0.3'], code: 'async function execute(input) { try { const r = await fetch(input.url); return { status: r.status, text: r.text }; } catch (e) { return { error: e.message }; } }' },
      testCases: [{ input: { url }, expectedOutput: {} }],
    }, { session: 'context:r' });
    return (result as { value: ForgeResult }).value.testResults[0].actual;
  }

  it('refuses a redirect to a host off the allowlist, before connecting there', async () => {
    expect(await fetchThroughTool(`${front.url}/to-internal`)).toEqual({ error: `redirected to ${internal.url}/secret, refused: fetch to 127.0.0.2 is not in the allowlist (allowed: 127.0.0.1, 127.0.0.3)` });
    expect(internal.requests).toHaveLength(0);
  });

  it('still follows a redirect to an allowlisted host', async () => {
    expect(await fetchThroughTool(`${front.url}/to-partner`)).toEqual({ status: 200, text: 'partner page /landing' });
  });

  it('refuses a chain at its first hop off the allowlist, after following the allowed ones', async () => {
    const before = partner.requests.length;
    expect(await fetchThroughTool(`${front.url}/via-partner`)).toEqual({ error: `redirected to ${internal.url}/secret, refused: fetch to 127.0.0.2 is not in the allowlist (allowed: 127.0.0.1, 127.0.0.3)` });
    expect(partner.requests.slice(before).map((r) => r.url)).toEqual(['/to-internal']);
    expect(internal.requests).toHaveLength(0);
  });
});
