/**
 * The agent's Deployment: replicas sharing a Postgres state store, probes
 * on /healthz and /readyz, a preStop pause while endpoints update, a
 * non-root read-only container, and every secret (the token, the state URL,
 * the model keys, the adapters' credentials) referenced from one Secret,
 * never written here.
 */
import type { AgentManifest } from '../../runtime/manifest.ts';
import { labelsFor, secretName, type KubernetesObject } from './kubernetes-names.ts';
import { templateVariables } from '../../runtime/tools/adapters/env-template.ts';

const DEFAULT_KEY_ENV = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
export const REPLICAS = 3;
export const CONTAINER_PORT = 8080;

/** The environment variables holding the model keys (the model and its fallbacks). */
export function modelKeyEnvs(manifest: AgentManifest): string[] {
  const model = manifest.model;
  if (!model) return [];
  const refs = [model, ...(model.fallbacks ?? [])];
  return [...new Set(refs.map((ref) => ref.api_key_env ?? DEFAULT_KEY_ENV[ref.provider]))].sort();
}

/** An environment variable the agent reads a secret from, and what reads it. */
export interface SecretEnv {
  name: string;
  usedBy: string;
  /** Only an optional MCP server reads it: the pod starts without it. */
  optional: boolean;
}

const CONTAINER_VARIABLES = new Set(['HOME', 'PATH', 'USER', 'PWD', 'TMPDIR', 'LANG', 'TERM', 'SHELL', 'HOSTNAME', 'NODE_ENV']);

/**
 * The variables besides the model keys that the agent reads secrets from: an OpenAPI service's
 * auth (token_env, value_env, username_env, password_env), the ${VAR}s of an MCP server's command
 * line, env, URL and headers, and those in a tool's config (a pinned webhook's headers) or named
 * by a config key ending in _env. Each goes into the Deployment from the Secret, as the keys do.
 */
export function adapterSecretEnvs(manifest: AgentManifest): SecretEnv[] {
  const found = new Map<string, SecretEnv>();
  const add = (name: string, usedBy: string, optional = false) => {
    const known = found.get(name);
    if (!known) found.set(name, { name, usedBy, optional });
    else if (!optional) known.optional = false;
  };
  const templates = (value: unknown, usedBy: string, optional = false) => {
    if (typeof value === 'string') for (const name of templateVariables(value)) add(name, usedBy, optional);
    else if (Array.isArray(value)) value.forEach((v) => templates(v, usedBy, optional));
    else if (value && typeof value === 'object') for (const [key, v] of Object.entries(value)) {
      if (key.endsWith('_env') && typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) add(v, usedBy, optional);
      else templates(v, usedBy, optional);
    }
  };
  for (const api of manifest.apis ?? []) if (api.auth) templates(api.auth, `API ${api.name}`);
  for (const server of manifest.mcp?.servers ?? []) {
    templates([server.command, server.args, server.env, server.cwd, server.url, server.headers], `MCP server ${server.name}`, !server.required);
  }
  for (const tool of manifest.tools) if (tool.config) templates(tool.config, `tool ${tool.name}`);
  for (const env of modelKeyEnvs(manifest)) found.delete(env);
  // Set already (Forge's own, from the Secret above) or by the container itself (HOME in an argument).
  for (const name of [...found.keys()]) if (name.startsWith('FORGE_') || CONTAINER_VARIABLES.has(name)) found.delete(name);
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function deployment(manifest: AgentManifest): KubernetesObject {
  const name = manifest.agent_id;
  const fromSecret = (env: string, optional = false) => ({ name: env, valueFrom: { secretKeyRef: { name: secretName(manifest), key: env, ...(optional ? { optional: true } : {}) } } });
  const adapterSecrets = adapterSecretEnvs(manifest);
  // Each variable once: env_passthrough's are optional, unless something above needs them.
  const fromSecretAbove = new Set([...modelKeyEnvs(manifest), ...adapterSecrets.map((env) => env.name)]);
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({ httpGet: { path, port: 'http' }, periodSeconds, timeoutSeconds: 3, failureThreshold });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: labelsFor(manifest) },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: labelsFor(manifest) },
        spec: {
          automountServiceAccountToken: false,
          // preStop (5 s) + drain (1 s) + the in-flight grace (20 s) fit in it.
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'agent',
              image: `${name}:${manifest.version}`,
              args: ['node', '/opt/agent/runtime.mjs', 'serve', '--host', '0.0.0.0', '--port', String(CONTAINER_PORT)],
              ports: [{ name: 'http', containerPort: CONTAINER_PORT, protocol: 'TCP' }],
              env: [
                { name: 'FORGE_PUBLIC_URL', value: `http://${name}` },
                { name: 'FORGE_DRAIN_DELAY', value: '1s' },
                { name: 'FORGE_SHUTDOWN_GRACE', value: '20s' },
                fromSecret('FORGE_AUTH_TOKEN'),
                fromSecret('FORGE_STATE_URL'),
                ...modelKeyEnvs(manifest).map((env) => fromSecret(env)),
                ...adapterSecrets.map((env) => fromSecret(env.name, env.optional)),
                ...[...manifest.env_passthrough].sort().filter((env) => !fromSecretAbove.has(env)).map((env) => fromSecret(env, true)),
              ],
              resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 2),
              startupProbe: probe('/healthz', 2, 30),
              // The pod is already leaving the Service's endpoints; keep serving while that spreads.
              lifecycle: { preStop: { sleep: { seconds: 5 } } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'workspace', mountPath: '/workspace' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'workspace', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

export function horizontalPodAutoscaler(manifest: AgentManifest): KubernetesObject {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: manifest.agent_id, labels: labelsFor(manifest) },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: manifest.agent_id },
      minReplicas: REPLICAS,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    },
  };
}
