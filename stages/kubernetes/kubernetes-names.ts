/** Names and labels every generated Kubernetes object shares. */
import type { AgentManifest } from '../../runtime/manifest.ts';

export type KubernetesObject = Record<string, unknown> & { apiVersion: string; kind: string };

export function labelsFor(manifest: AgentManifest): Record<string, string> {
  return { 'app.kubernetes.io/name': manifest.agent_id, 'app.kubernetes.io/version': manifest.version, 'app.kubernetes.io/managed-by': 'forge' };
}

export function secretName(manifest: AgentManifest): string {
  return `${manifest.agent_id}-secrets`;
}
