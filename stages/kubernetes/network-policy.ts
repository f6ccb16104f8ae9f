/**
 * A NetworkPolicy derived from the agent's egress policy. Kubernetes cannot
 * name domains, so an allowlist of domains becomes public addresses, IPv4
 * and IPv6, on the ports the agent's endpoints use: 443 and 80, the port of
 * every public endpoint the build found (a model gateway on :8443), and the
 * port of an allowed_domains `host:port` entry (the runtime still refuses
 * any domain not on the list); the explicitly allowed private addresses
 * become address blocks, on the entry's port when it names one
 * (`10.0.0.5:8080`) and on every port otherwise; `deny-all` keeps only DNS and the
 * state store; `open` opens egress. Ingress: the agent's port only.
 */
import { parseDomainRule } from '../../runtime/guard/egress.ts';
import { parseAddressRule } from '../../runtime/guard/ip-address.ts';
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
    const blocks = (egress.allowed_addresses ?? []).flatMap(toBlocks);
    const everyPort = [...new Set(blocks.filter((b) => b.port === undefined).map((b) => b.cidr))].sort();
    if (everyPort.length) rules.push({ to: everyPort.map((cidr) => ({ ipBlock: { cidr } })) });
    // One rule per port: a rule's `to` and `ports` combine as "any of these addresses on any of these ports".
    const onPorts = [...new Set(blocks.map((b) => b.port).filter((p): p is number => p !== undefined))].sort((a, b) => a - b);
    for (const port of onPorts) {
      const cidrs = [...new Set(blocks.filter((b) => b.port === port && !everyPort.includes(b.cidr)).map((b) => b.cidr))].sort();
      if (cidrs.length) rules.push({ to: cidrs.map((cidr) => ({ ipBlock: { cidr } })), ports: tcp([port]) });
    }
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

interface AddressBlock {
  cidr: string;
  port?: number;
}

/**
 * An allowed_addresses entry as CIDRs (and its port); none for loopback, which a NetworkPolicy does not
 * govern. An IPv6 address carrying an IPv4 one (NAT64, 6to4) is both: the runtime judges it as the IPv4
 * it reaches, and the pod's packets go to the IPv6 address as written.
 */
function toBlocks(entry: string): AddressBlock[] {
  const rule = parseAddressRule(entry);
  if (!rule || rule.exact?.range() === 'loopback') return [];
  const port = rule.port !== undefined ? { port: rule.port } : {};
  if (rule.range) return rule.range[0].range() === 'loopback' ? [] : [{ cidr: `${rule.range[0].toString()}/${rule.range[1]}`, ...port }];
  return [rule.exact, rule.written]
    .filter((ip): ip is NonNullable<typeof ip> => ip !== undefined && ip.range() !== 'loopback')
    .map((ip) => ({ cidr: `${ip.toString()}/${ip.kind() === 'ipv4' ? 32 : 128}`, ...port }));
}
