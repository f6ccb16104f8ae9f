/**
 * What kind of address an IP is, for the egress policy: public, or one of
 * the ranges an agent must not reach unless told to (loopback, private,
 * link-local, CGNAT, IPv6 unique-local...). Parsing is ipaddr.js's, which
 * reads every form a URL or a resolver can produce: dotted, decimal
 * (2130706433), octal (0177.0.0.1), hex (0x7f.1), and IPv6 with an IPv4
 * inside it (::ffff:127.0.0.1, 64:ff9b::7f00:1, 2002:7f00:1::).
 */
import { ipaddr } from '../vendor/libs.ts';

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

export interface AddressClass {
  /** The canonical form (an IPv4 inside an IPv6 address is given as the IPv4). */
  address: string;
  /** 'unicast' for a public address; otherwise the range's name (loopback, private, linkLocal...). */
  range: string;
  /** How a person names the range: "a loopback address". */
  description: string;
  /** A cloud provider's instance metadata service. */
  metadata: boolean;
  parsed: Parsed;
}

/**
 * Instance metadata services (AWS, GCP, Azure, OCI, DigitalOcean: 169.254.169.254;
 * AWS over IPv6: fd00:ec2::254; AWS ECS task metadata: 169.254.170.2;
 * Alibaba: 100.100.100.200). Reaching one is the classic SSRF prize, so only
 * an exact entry allows it — a range that happens to contain it does not.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);

/** Host names that resolve to a metadata service inside a cloud. */
export const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.internal']);

const DESCRIPTIONS: Record<string, string> = {
  unicast: 'a public address',
  loopback: 'a loopback address',
  private: 'a private network address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  uniqueLocal: 'an IPv6 unique local address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  teredo: 'a Teredo tunnel address',
};

/** The class of an IP address, or undefined when `text` is not one. */
export function classifyAddress(text: string): AddressClass | undefined {
  const parsed = parseAddress(text);
  if (!parsed) return undefined;
  const ip = embeddedIPv4(parsed) ?? parsed;
  const range = ip.range();
  const address = ip.toString();
  const metadata = METADATA_ADDRESSES.has(address);
  return {
    address,
    range,
    description: metadata ? 'a cloud metadata address' : (DESCRIPTIONS[range] ?? `a non-public (${range}) address`),
    metadata,
    parsed: ip,
  };
}

export function isPublic(cls: AddressClass): boolean {
  return cls.range === 'unicast' && !cls.metadata;
}

function parseAddress(text: string): Parsed | undefined {
  const bare = text.replace(/^\[|\]$/g, '');
  try {
    return ipaddr.process(bare);
  } catch {
    return undefined;
  }
}

/**
 * An IPv4 address carried inside an IPv6 one reaches the IPv4 host, so it is
 * judged as that host: IPv4-mapped and -translated (::ffff:a.b.c.d,
 * ::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d)
 * and 6to4 (2002:aabb:ccdd::).
 */
function embeddedIPv4(ip: Parsed): ipaddr.IPv4 | undefined {
  if (ip.kind() !== 'ipv6') return undefined;
  const v6 = ip as ipaddr.IPv6;
  const p = v6.parts;
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (v6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return fromWords(p[6], p[7]);
    case '6to4':
      return fromWords(p[1], p[2]);
    default:
      // ::a.b.c.d (deprecated IPv4-compatible), but not :: and ::1 themselves.
      if (p.slice(0, 6).every((w) => w === 0) && p[6] !== 0) return fromWords(p[6], p[7]);
      return undefined;
  }
}

/**
 * An entry of egress.allowed_addresses: one address, or a CIDR range. An
 * address may carry a port (`127.0.0.1:11434`, `[::1]:11434`): then only that
 * port is allowed. The build writes an endpoint's loopback address that way,
 * so a model on 127.0.0.1:11434 does not open every other loopback port.
 */
export interface AddressRule {
  text: string;
  exact?: Parsed;
  /** An exact IPv6 address carrying an IPv4 one (NAT64, 6to4, mapped), as written: `exact` is the IPv4 it reaches. */
  written?: Parsed;
  range?: [Parsed, number];
  port?: number;
}

export function parseAddressRule(text: string): AddressRule | undefined {
  const trimmed = text.trim();
  if (trimmed.includes('/')) {
    try {
      const [base, bits] = ipaddr.parseCIDR(trimmed);
      // ::ffff:10.0.0.0/104 is 10.0.0.0/8: addresses are compared in their IPv4 form.
      if (base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return { text, range: [(base as ipaddr.IPv6).toIPv4Address(), bits - 96] };
      }
      return { text, range: [base, bits] };
    } catch {
      return undefined;
    }
  }
  // `[v6]:port` or `v4:port`; a bare IPv6 address has colons of its own and no port.
  const withPort = /^\[([^\]]+)\]:(\d{1,5})$/.exec(trimmed) ?? /^([^:[\]]+):(\d{1,5})$/.exec(trimmed);
  const port = withPort ? Number(withPort[2]) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const exact = parseAddress(withPort ? withPort[1] : trimmed);
  if (!exact) return undefined;
  const inner = embeddedIPv4(exact);
  return { text, exact: inner ?? exact, ...(inner ? { written: exact } : {}), ...(port !== undefined ? { port } : {}) };
}

/** An address (and port) as an allowed_addresses entry: `127.0.0.1:8080`, `[::1]:8080`. */
export function addressEntry(address: string, port?: number): string {
  if (port === undefined) return address;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Whether the rule allows the address on this TCP port; a metadata address needs an exact entry. */
export function ruleAllows(rule: AddressRule, cls: AddressClass, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  const ip = cls.parsed;
  if (rule.exact) return rule.exact.kind() === ip.kind() && rule.exact.toString() === ip.toString();
  if (!rule.range || cls.metadata) return false;
  return rule.range[0].kind() === ip.kind() && ip.match(rule.range);
}
