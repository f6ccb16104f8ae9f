/**
 * The egress policy: a table of URLs and resolved addresses it allows and
 * refuses, then the policy inside the real HTTP client against real
 * loopback servers. Requests that must be refused only ever point at
 * loopback: a refused private or public address is checked on the policy
 * alone, so a bug can never send traffic off this machine.
 */
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import type { EgressSettings } from '../../../runtime/manifest.ts';
import { EgressRefusedError } from '../../../runtime/net/egress-policy.ts';
import { HttpClient, type HostLookup } from '../../../runtime/net/http-client.ts';
import { startServer } from '../../helpers/http-server.ts';

const allowlist = (allowed_domains: string[], allowed_addresses: string[] = []): EgressSettings => ({ mode: 'allowlist', allowed_domains, allowed_addresses });

/** Checks a URL the way the client does: the URL, then its literal address, if it is one. */
function check(settings: EgressSettings, url: string): string | undefined {
  const policy = createEgressPolicy(settings);
  const parsed = new URL(url);
  const refusal = policy.checkUrl(parsed);
  if (refusal) return refusal.rule;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
  return family ? policy.checkAddress(host, host, family as 4 | 6, port)?.rule : undefined;
}

describe('egress policy: URLs', () => {
  const settings = allowlist(['api.github.com', '*.example.com', 'pinned.example.org:8443', '93.184.216.34', '140.82.112.5:8443']);

  it.each([
    ['an exact domain', 'https://api.github.com/repos'],
    ['an exact domain in another case, with a trailing dot', 'https://API.GitHub.com./repos'],
    ['a subdomain under a wildcard', 'https://a.example.com/'],
    ['a deeper subdomain under a wildcard', 'https://a.b.example.com/'],
    ['a domain pinned to its port', 'https://pinned.example.org:8443/x'],
    ['a public IP listed in allowed_domains', 'http://93.184.216.34/'],
    ['a public IP pinned to its port', 'https://140.82.112.5:8443/'],
  ])('allows %s', (_what, url) => {
    expect(check(settings, url)).toBeUndefined();
  });

  it.each([
    ['a domain not listed', 'https://evil.com/', 'evil.com is not in egress.allowed_domains'],
    ['the parent of a wildcard', 'https://example.com/', 'example.com is not in egress.allowed_domains'],
    ['a name that only ends like an allowed one', 'https://evilexample.com/', 'evilexample.com is not in egress.allowed_domains'],
    ['a subdomain of an exact entry', 'https://x.api.github.com/', 'x.api.github.com is not in egress.allowed_domains'],
    ['a pinned domain on another port', 'https://pinned.example.org/', 'pinned.example.org is allowed only on port 8443'],
    ['a public IP not listed', 'http://8.8.8.8/', '8.8.8.8 is not in egress.allowed_domains'],
    ['a pinned public IP on another port', 'https://140.82.112.5/', '140.82.112.5 is allowed only on port 8443'],
  ])('refuses %s', (_what, url, rule) => {
    expect(check(settings, url)).toContain(rule);
  });

  it.each([
    ['loopback', 'http://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['loopback elsewhere in 127/8', 'http://127.8.9.10/', '127.8.9.10 is a loopback address'],
    ['loopback written in decimal', 'http://2130706433/', '127.0.0.1 is a loopback address'],
    ['loopback written in octal', 'http://0177.0.0.1/', '127.0.0.1 is a loopback address'],
    ['loopback written in hex', 'http://0x7f.0.0.1/', '127.0.0.1 is a loopback address'],
    ['loopback written short', 'http://127.1/', '127.0.0.1 is a loopback address'],
    ['a private 10/8 address', 'http://10.1.2.3/', 'a private network address'],
    ['a private 172.16/12 address', 'http://172.20.0.5/', 'a private network address'],
    ['a private 192.168/16 address', 'http://192.168.1.1/', 'a private network address'],
    ['a CGNAT address', 'http://100.64.0.1/', 'carrier-grade NAT'],
    ['the unspecified address', 'http://0.0.0.0/', 'the unspecified address'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/', 'a cloud metadata address'],
    ['a link-local address', 'http://169.254.1.1/', 'a link-local address'],
    ['IPv6 loopback', 'http://[::1]/', '::1 is a loopback address'],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/', '127.0.0.1 is a loopback address'],
    ['IPv4-mapped IPv6 loopback in hex', 'http://[::ffff:7f00:1]/', '127.0.0.1 is a loopback address'],
    ['NAT64 loopback', 'http://[64:ff9b::7f00:1]/', '127.0.0.1 is a loopback address'],
    ['6to4 private', 'http://[2002:a00:1::]/', '10.0.0.1 is a private network address'],
    ['an IPv6 unique local address', 'http://[fd12:3456::1]/', 'an IPv6 unique local address'],
    ['an IPv6 link-local address', 'http://[fe80::1]/', 'a link-local address'],
    ['the AWS IPv6 metadata address', 'http://[fd00:ec2::254]/', 'a cloud metadata address'],
  ])('refuses %s in open mode too', (_what, url, rule) => {
    expect(check({ mode: 'open', allowed_domains: [] }, url)).toContain(rule);
  });

  it('refuses everything in deny-all mode, listed or not', () => {
    expect(check({ mode: 'deny-all', allowed_domains: ['api.github.com'] }, 'https://api.github.com/')).toBe('egress.mode is deny-all, which refuses every outbound request');
  });

  it('allows any public host in open mode', () => {
    expect(check({ mode: 'open', allowed_domains: [] }, 'https://anything.example.net/')).toBeUndefined();
    expect(check({ mode: 'open', allowed_domains: [] }, 'http://8.8.8.8/')).toBeUndefined();
  });

  it('refuses a cloud metadata host name even in open mode, unless listed exactly', () => {
    expect(check({ mode: 'open', allowed_domains: [] }, 'http://metadata.google.internal/')).toContain('cloud metadata endpoint');
    expect(check({ mode: 'open', allowed_domains: ['*.google.internal'] }, 'http://metadata.google.internal/')).toContain('cloud metadata endpoint');
    expect(check({ mode: 'open', allowed_domains: ['metadata.google.internal'] }, 'http://metadata.google.internal/')).toBeUndefined();
  });

  it.each([
    ['an exact address', ['127.0.0.1'], 'http://127.0.0.1:8080/', undefined],
    ['an exact address, reached in decimal', ['127.0.0.1'], 'http://2130706433/', undefined],
    ['an exact address, reached as IPv4-mapped IPv6', ['127.0.0.1'], 'http://[::ffff:127.0.0.1]/', undefined],
    ['a range', ['10.0.0.0/8'], 'http://10.20.30.40/', undefined],
    ['an IPv6 address', ['::1'], 'http://[::1]:9000/', undefined],
    ['a range, not another address', ['10.0.0.0/8'], 'http://192.168.0.1/', '192.168.0.1 is a private network address'],
    ['a range holding the metadata address (not enough)', ['169.254.0.0/16'], 'http://169.254.169.254/', 'a cloud metadata address'],
    ['the metadata address listed exactly', ['169.254.169.254'], 'http://169.254.169.254/', undefined],
    ['an address with its port, on that port', ['127.0.0.1:11434'], 'http://127.0.0.1:11434/v1', undefined],
    ['an address with its port, reached in decimal', ['127.0.0.1:11434'], 'http://2130706433:11434/', undefined],
    ['an address with its port, reached as IPv4-mapped IPv6', ['127.0.0.1:11434'], 'http://[::ffff:127.0.0.1]:11434/', undefined],
    ['an address with its port, on another port', ['127.0.0.1:11434'], 'http://127.0.0.1:8080/', '127.0.0.1 is allowed only on port 11434 (egress.allowed_addresses), not on 8080'],
    ['an address with its port, on the scheme\'s default port', ['127.0.0.1:11434'], 'http://127.0.0.1/', 'allowed only on port 11434 (egress.allowed_addresses), not on 80'],
    ['an address with port 80, over https', ['127.0.0.1:80'], 'https://127.0.0.1/', 'allowed only on port 80 (egress.allowed_addresses), not on 443'],
    ['an IPv6 address with its port, on that port', ['[::1]:9000'], 'http://[::1]:9000/', undefined],
    ['an IPv6 address with its port, on another port', ['[::1]:9000'], 'http://[::1]:9001/', '::1 is allowed only on port 9000'],
    ['an address with its port, not another address', ['127.0.0.1:11434'], 'http://127.0.0.2:11434/', '127.0.0.2 is a loopback address'],
    ['two ports of one address', ['127.0.0.1:11434', '127.0.0.1:8000'], 'http://127.0.0.1:9/', 'allowed only on port 11434 and 8000'],
    ['a port entry beside the whole address', ['127.0.0.1:11434', '127.0.0.1'], 'http://127.0.0.1:9/', undefined],
  ])('allowed_addresses: %s', (_what, addresses, url, rule) => {
    const result = check(allowlist([], addresses), url);
    if (rule === undefined) expect(result).toBeUndefined();
    else expect(result).toContain(rule);
  });
});

describe('egress policy: resolved addresses', () => {
  it.each([
    ['a public address', '140.82.112.5', 4, undefined],
    ['loopback', '127.0.0.1', 4, 'it resolves to 127.0.0.1, a loopback address'],
    ['a private address', '10.0.0.7', 4, 'it resolves to 10.0.0.7, a private network address'],
    ['the metadata address', '169.254.169.254', 4, 'a cloud metadata address'],
    ['IPv6 loopback', '::1', 6, 'it resolves to ::1, a loopback address'],
    ['an IPv4-mapped private address', '::ffff:192.168.0.1', 6, 'it resolves to 192.168.0.1, a private network address'],
    ['an IPv6 unique local address', 'fc00::5', 6, 'an IPv6 unique local address'],
  ] as const)('a listed name that resolves to %s', (_what, address, family, rule) => {
    const refusal = createEgressPolicy(allowlist(['api.github.com'])).checkAddress('api.github.com', address, family, 443);
    if (rule === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toMatchObject({ host: 'api.github.com', rule: expect.stringContaining(rule), hint: expect.stringContaining('egress.allowed_addresses') });
  });
});

/** A resolver that answers every name with the given addresses (a public name pointing at loopback). */
function resolveTo(...addresses: string[]): HostLookup {
  return (_name, _options, callback) => callback(null, addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })));
}

describe('egress policy in the HTTP client (real loopback servers)', () => {
  it('reaches a loopback server that allowed_addresses lists, in every IPv4 notation', async () => {
    const server = await startServer((_req, res) => res.end('reached'));
    const client = new HttpClient(createEgressPolicy(allowlist([], ['127.0.0.1'])));
    for (const host of ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1']) {
      const response = await client.request({ url: `http://${host}:${server.port}/` });
      expect(response.body.toString()).toBe('reached');
    }
    expect(server.requests).toHaveLength(5);
  });

  it.each(['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f.1', '[::ffff:127.0.0.1]'])('refuses %s without an allowed_addresses entry, and sends nothing', async (host) => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy({ mode: 'open', allowed_domains: [] }));
    const error = await client.request({ url: `http://${host}:${server.port}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as Error).message).toMatch(/^egress to 127\.0\.0\.1 refused: 127\.0\.0\.1 is a loopback address/);
    expect(server.requests).toHaveLength(0);
  });

  it('reaches only the listed port of an address listed with one, by IP or by a name resolving to it', async () => {
    const endpoint = await startServer((_req, res) => res.end('reached'));
    const other = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy(allowlist(['localhost'], [`127.0.0.1:${endpoint.port}`])), { lookup: resolveTo('127.0.0.1') });
    expect((await client.request({ url: `http://127.0.0.1:${endpoint.port}/` })).body.toString()).toBe('reached');
    expect((await client.request({ url: `http://localhost:${endpoint.port}/` })).body.toString()).toBe('reached');
    for (const url of [`http://127.0.0.1:${other.port}/`, `http://localhost:${other.port}/`, `http://2130706433:${other.port}/`, `http://[::ffff:127.0.0.1]:${other.port}/`]) {
      const error = await client.request({ url }).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(EgressRefusedError);
      expect((error as EgressRefusedError).refusal.rule).toBe(`127.0.0.1 is allowed only on port ${endpoint.port} (egress.allowed_addresses), not on ${other.port}`);
    }
    expect(other.requests).toHaveLength(0);
  });

  it('refuses a redirect from the listed port to another port of the same address', async () => {
    const other = await startServer((_req, res) => res.end('admin secret'));
    const endpoint = await startServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${other.port}/admin` }).end());
    const client = new HttpClient(createEgressPolicy(allowlist([], [`127.0.0.1:${endpoint.port}`])));
    const error = await client.request({ url: `${endpoint.url}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect(endpoint.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(0);
  });

  it('refuses "localhost" even when allowed_domains lists it, because it resolves to loopback', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy(allowlist(['localhost'])));
    const error = await client.request({ url: `http://localhost:${server.port}/` }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('egress to localhost refused: it resolves to 127.0.0.1, a loopback address');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a public-looking name whose DNS answer is a loopback address', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy(allowlist(['api.trusted-vendor.com'])), { lookup: resolveTo('127.0.0.1') });
    const error = await client.request({ url: `http://api.trusted-vendor.com:${server.port}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as EgressRefusedError).refusal).toMatchObject({ host: 'api.trusted-vendor.com', rule: expect.stringContaining('it resolves to 127.0.0.1, a loopback address') });
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a name when any of its addresses is refused (one public, one loopback)', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy(allowlist(['mixed.example.com'])), { lookup: resolveTo('140.82.112.5', '::1') });
    const error = await client.request({ url: `http://mixed.example.com:${server.port}/` }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('it resolves to ::1, a loopback address');
    expect(server.requests).toHaveLength(0);
  });

  it('connects to the address it allowed: a public-looking name resolving to an allowed loopback address', async () => {
    const server = await startServer((req, res) => res.end(`host header: ${req.headers.host}`));
    const client = new HttpClient(createEgressPolicy(allowlist(['svc.internal.test'], ['127.0.0.1'])), { lookup: resolveTo('127.0.0.1') });
    const response = await client.request({ url: `http://svc.internal.test:${server.port}/` });
    expect(response.body.toString()).toBe(`host header: svc.internal.test:${server.port}`);
  });

  it('refuses a redirect to a refused host, and never contacts it', async () => {
    const target = await startServer((_req, res) => res.end('secret'));
    const start = await startServer((_req, res) => res.writeHead(302, { location: `http://localhost:${target.port}/admin` }).end());
    // 127.0.0.1 is allowed (the start server); localhost is not in allowed_domains.
    const client = new HttpClient(createEgressPolicy(allowlist([], ['127.0.0.1', '::1'])));
    const error = await client.request({ url: `${start.url}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as Error).message).toBe('egress to localhost refused: localhost is not in egress.allowed_domains');
    expect(start.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it('refuses a redirect to an IPv6 loopback literal', async () => {
    const start = await startServer((_req, res) => res.writeHead(307, { location: 'http://[::1]:9/' }).end());
    const client = new HttpClient(createEgressPolicy(allowlist([], ['127.0.0.1'])));
    const error = await client.request({ url: `${start.url}/` }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('egress to ::1 refused');
  });

  it('refuses everything in deny-all mode before any connection', async () => {
    const server = await startServer((_req, res) => res.end('should not be reached'));
    const client = new HttpClient(createEgressPolicy({ mode: 'deny-all', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }));
    await expect(client.request({ url: server.url })).rejects.toThrow('egress.mode is deny-all');
    expect(server.requests).toHaveLength(0);
  });
});
