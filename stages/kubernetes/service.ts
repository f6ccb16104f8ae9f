/** The Service in front of the replicas, their PodDisruptionBudget, and the Secret they read (a template to fill in). */
import type { AgentManifest } from '../../runtime/manifest.ts';
import { labelsFor, secretName, type KubernetesObject } from './kubernetes-names.ts';
import { adapterSecretEnvs, modelKeyEnvs } from './workload.ts';

export function service(manifest: AgentManifest): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: manifest.agent_id, labels: labelsFor(manifest) },
    spec: {
      type: 'ClusterIP',
      selector: { 'app.kubernetes.io/name': manifest.agent_id },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

export function podDisruptionBudget(manifest: AgentManifest): KubernetesObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: manifest.agent_id, labels: labelsFor(manifest) },
    spec: { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': manifest.agent_id } } },
  };
}

/** Placeholders only: the real values are set with kubectl or a secret manager, never committed. */
export function secretTemplate(manifest: AgentManifest): KubernetesObject {
  const stringData: Record<string, string> = {
    FORGE_AUTH_TOKEN: 'REPLACE: a long random token (openssl rand -base64 32), the same for every replica',
    FORGE_STATE_URL: 'REPLACE: postgres://USER:PASSWORD@HOST:5432/DATABASE',
  };
  for (const env of modelKeyEnvs(manifest)) stringData[env] = `REPLACE: the model API key (${env})`;
  for (const env of adapterSecretEnvs(manifest)) stringData[env.name] = `REPLACE: used by ${env.usedBy}${env.optional ? ' (optional server: may be left out)' : ''}`;
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName(manifest), labels: labelsFor(manifest) }, type: 'Opaque', stringData };
}
