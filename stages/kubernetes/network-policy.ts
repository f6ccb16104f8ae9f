/**
 * A NetworkPolicy derived from the agent's egress policy. Kubernetes cannot
 * name domains, so an allowlist of domains becomes public addresses, IPv4
 * and IPv6, on the ports the agent's endpoints use: 443 and 80, the port of
 * every public endpoint the build found (a model gateway on :8443), and the
 * port of an allowed_domains `host:port` entry (the runtime still refuses
 * any domain not on the list); the explicitly allowed private addresses
 * become address blocks on every port; `deny-all` keeps only DNS and the
 * state store; `open` opens egress. Ingress: the agent's port only.
 */
import ipaddr from 'ipaddr.js';
import { parseDomainRule } from '../../runtime/guard/egress.ts';
import type { AgentManifest, EgressSettings } from '../../runtime/manifest.ts';
import { labelsFor, type KubernetesObject } from './kubernetes-names.ts';
import { CONTAINER_PORT } from './workload.ts';

const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'];
/** Unique-local, link-local, and IPv4-mapped (an IPv4 private address written as IPv6). */
const PRIVATE_RANGES_V6 = ['fc00::/7', 'fe80::/10', '::ffff:0:0/96'];
const WEB_PORTS = [443, 80];
const POSTGRES_PORT = 5432;

export function networkPolicy(manifest: AgentManifest): KubernetesObject {
  const { egress } = manifest;
  const rules: Record<string, unknown>[] = [
    // DNS, wherever the cluster runs it.
    { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
    // The shared state store (Postgres), inside or outside the cluster.
    { ports: tcp(statePorts(manifest.state)) },
  ];
  if (egress.mode === 'open') rules.push({});
  else {
    if (egress.mode === 'allowlist' && egress.allowed_domains.length) {
      rules.push({ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: PRIVATE_RANGES } }, { ipBlock: { cidr: '::/0', except: PRIVATE_RANGES_V6 } }], ports: tcp(publicPorts(egress)) });
    }
    const blocks = (egress.allowed_addresses ?? []).map(toCidr).filter((c): c is string => c !== undefined);
    if (blocks.length) rules.push({ to: [...new Set(blocks)].sort().map((cidr) => ({ ipBlock: { cidr } })) });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: manifest.agent_id, labels: labelsFor(manifest) },
    spec: {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': manifest.agent_id } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ port: CONTAINER_PORT, protocol: 'TCP' }] }],
      egress: rules,
    },
  };
}

function tcp(ports: readonly number[]): { port: number; protocol: 'TCP' }[] {
  return ports.map((port) => ({ port, protocol: 'TCP' }));
}

/**
 * Postgres's port, and the one forge.yaml's `state:` URL names (PgBouncer on
 * 6432). FORGE_STATE_URL is a secret the build never sees, so 5432 stays.
 */
function statePorts(state: string | undefined): number[] {
  const ports = [POSTGRES_PORT];
  if (state && /^postgres(ql)?:/i.test(state) && URL.canParse(state)) {
    const port = Number(new URL(state).port);
    if (port && port !== POSTGRES_PORT) ports.push(port);
  }
  return ports;
}

/** 443 and 80, then the other ports of the build's endpoints and of `host:port` entries, ascending. */
function publicPorts(egress: EgressSettings): number[] {
  const others = new Set(egress.endpoint_ports ?? []);
  for (const entry of egress.allowed_domains) {
    const port = Number(parseDomainRule(entry)?.port);
    if (port) others.add(port);
  }
  for (const port of WEB_PORTS) others.delete(port);
  return [...WEB_PORTS, ...[...others].sort((a, b) => a - b)];
}

/** An address or CIDR as a CIDR; undefined for names and loopback (a NetworkPolicy does not govern those). */
function toCidr(address: string): string | undefined {
  try {
    const [ip, bits] = address.includes('/') ? ipaddr.parseCIDR(address) : [ipaddr.parse(address), undefined];
    if (ip.range() === 'loopback') return undefined;
    return `${ip.toString()}/${bits ?? (ip.kind() === 'ipv4' ? 32 : 128)}`;
  } catch {
    return undefined;
  }
}
