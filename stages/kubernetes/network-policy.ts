/**
 * A NetworkPolicy derived from the agent's egress policy. Kubernetes cannot
 * name domains, so an allowlist of domains becomes HTTPS/HTTP to public
 * addresses (the runtime still refuses any domain not on the list); the
 * explicitly allowed private addresses become address blocks; `deny-all`
 * keeps only DNS and the state store; `open` opens egress. Ingress: the
 * agent's port only.
 */
import ipaddr from 'ipaddr.js';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { labelsFor, type KubernetesObject } from './kubernetes-names.ts';
import { CONTAINER_PORT } from './workload.ts';

const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'];
const POSTGRES_PORT = 5432;

export function networkPolicy(manifest: AgentManifest): KubernetesObject {
  const { egress } = manifest;
  const rules: Record<string, unknown>[] = [
    // DNS, wherever the cluster runs it.
    { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
    // The shared state store (Postgres), inside or outside the cluster.
    { ports: [{ port: POSTGRES_PORT, protocol: 'TCP' }] },
  ];
  if (egress.mode === 'open') rules.push({});
  else {
    if (egress.mode === 'allowlist' && egress.allowed_domains.length) {
      rules.push({ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: PRIVATE_RANGES } }], ports: [{ port: 443, protocol: 'TCP' }, { port: 80, protocol: 'TCP' }] });
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
