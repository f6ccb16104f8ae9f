/**
 * The egress policy built from forge.yaml's `egress:` (as agent.json
 * records it). The HTTP client asks it about every URL (each redirect hop
 * too) and every address a host resolves to, so this is the one place that
 * decides where the agent may connect.
 *
 * - mode deny-all refuses everything; allowlist allows the hosts in
 *   allowed_domains (exact names, or `*.example.com` for its subdomains,
 *   optionally with a port); open allows any host;
 * - in every mode, an address that is not public (loopback, private,
 *   link-local, CGNAT, IPv6 unique-local, an IPv4 hidden in IPv6...) is
 *   refused unless allowed_addresses lists it or a range holding it (with a
 *   port, `127.0.0.1:11434`, on that port only), and a cloud metadata
 *   endpoint only when listed exactly.
 */
import type { EgressSettings } from '../manifest.ts';
import { urlPort, type EgressPolicy, type EgressRefusal } from '../net/egress-policy.ts';
import { addressEntry, classifyAddress, isPublic, METADATA_HOSTS, parseAddressRule, ruleAllows, type AddressClass, type AddressRule } from './ip-address.ts';

interface DomainRule {
  text: string;
  /** Canonical host (punycode, lower case; an IP in canonical form); for `*.x` the suffix x. */
  host: string;
  wildcard: boolean;
  port?: string;
}

export function createEgressPolicy(settings: EgressSettings): EgressPolicy {
  const domains = settings.allowed_domains.map(parseDomainRule).filter((r): r is DomainRule => r !== undefined);
  const addresses = (settings.allowed_addresses ?? []).map(parseAddressRule).filter((r): r is AddressRule => r !== undefined);
  const mode = settings.mode;

  const listedExactly = (host: string) => domains.some((d) => !d.wildcard && d.host === host);
  const addressAllowed = (cls: AddressClass, port: number) => addresses.some((rule) => ruleAllows(rule, cls, port));
  const addressRefused = (host: string, cls: AddressClass, port: number): EgressRefusal => {
    // Listed, but for other ports: say so, rather than "not listed".
    const ports = addresses.filter((rule) => rule.port !== undefined && ruleAllows(rule, cls, rule.port)).map((rule) => rule.port);
    if (ports.length === 0) return addressRefusal(host, cls, port);
    return { host, rule: `${cls.address} is allowed only on port ${ports.join(' and ')} (egress.allowed_addresses), not on ${port}`, hint: `add "${addressEntry(cls.address, port)}" to egress.allowed_addresses if this is intended` };
  };

  return {
    checkUrl(url: URL): EgressRefusal | undefined {
      const host = canonicalHost(url.hostname);
      if (mode === 'deny-all') {
        return { host, rule: 'egress.mode is deny-all, which refuses every outbound request', hint: 'set egress.mode to allowlist and list the host in egress.allowed_domains' };
      }
      const literal = classifyAddress(host);
      if (!literal && METADATA_HOSTS.has(host) && !listedExactly(host)) {
        return { host, rule: `${host} is a cloud metadata endpoint`, hint: `only an exact egress.allowed_domains entry "${host}" allows it` };
      }
      if (mode === 'open') return undefined;
      const port = urlPort(url);
      if (literal) {
        if (addressAllowed(literal, port)) return undefined;
        if (!isPublic(literal)) return addressRefused(host, literal, port);
      }
      // A wildcard entry is for names: *.example.com says nothing about an address.
      const match = domains.find((d) => (!literal || !d.wildcard) && matchesDomain(d, host));
      if (match && (!match.port || match.port === String(port))) return undefined;
      if (match) return { host, rule: `${host} is allowed only on port ${match.port} (egress.allowed_domains: ${match.text})`, hint: `add "${host}:${port}" to egress.allowed_domains` };
      return { host, rule: `${host} is not in egress.allowed_domains`, hint: `add "${host}" to egress.allowed_domains in forge.yaml` };
    },

    checkAddress(host: string, address: string, _family: 4 | 6, port: number): EgressRefusal | undefined {
      const cls = classifyAddress(address);
      const name = canonicalHost(host);
      if (!cls) return { host: name, rule: `"${address}" is not an IP address` };
      if (mode === 'deny-all') return { host: name, rule: 'egress.mode is deny-all, which refuses every outbound request' };
      if (isPublic(cls) || addressAllowed(cls, port)) return undefined;
      return addressRefused(name, cls, port);
    },
  };
}

function addressRefusal(host: string, cls: AddressClass, port: number): EgressRefusal {
  const what = host === cls.address ? `${cls.address} is ${cls.description}` : `it resolves to ${cls.address}, ${cls.description}`;
  const rule = `${what}, and egress refuses non-public addresses unless egress.allowed_addresses lists them`;
  const hint = cls.metadata
    ? `only an exact egress.allowed_addresses entry "${cls.address}" allows a metadata endpoint`
    : `add "${addressEntry(cls.address, port)}" (this port only), "${cls.address}" (every port) or a range holding it to egress.allowed_addresses if this is intended`;
  return { host, rule, hint };
}

function matchesDomain(rule: DomainRule, host: string): boolean {
  return rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

/** Lower case, no brackets, no trailing dot; an IP in its canonical form. */
export function canonicalHost(hostname: string): string {
  const bare = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  return classifyAddress(bare)?.address ?? bare;
}

/** Parses an allowed_domains entry the way URLs are parsed, so both compare in one form. */
export function parseDomainRule(text: string): DomainRule | undefined {
  const wildcard = text.startsWith('*.');
  const rest = wildcard ? text.slice(2) : text;
  let url: URL;
  try {
    url = new URL(`http://${rest}`);
  } catch {
    return undefined;
  }
  if (url.pathname !== '/' || url.username || url.search) return undefined;
  const explicitPort = /:(\d+)$/.exec(rest)?.[1];
  return { text, host: canonicalHost(url.hostname), wildcard, ...(explicitPort ? { port: String(Number(explicitPort)) } : {}) };
}
