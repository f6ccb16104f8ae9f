/**
 * Checks Kubernetes objects against the Kubernetes API's own schemas, from
 * the kubernetes-models package (generated from the Kubernetes OpenAPI):
 * its ajv validators check types, required fields and formats; and its
 * generated TypeScript interfaces, through the TypeScript compiler's
 * excess-property check, refuse every key the API does not know (the
 * validators alone let unknown keys through, as the API server would
 * silently drop them).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { repoRoot } from './project.ts';

const MODELS: Record<string, { model: new (data: any) => { validate(): void }; module: string; type: string }> = {
  'apps/v1 Deployment': { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment', type: 'IDeployment' },
  'v1 Service': { model: Service, module: 'kubernetes-models/v1/Service', type: 'IService' },
  'v1 Secret': { model: Secret, module: 'kubernetes-models/v1/Secret', type: 'ISecret' },
  'policy/v1 PodDisruptionBudget': { model: PodDisruptionBudget, module: 'kubernetes-models/policy/v1/PodDisruptionBudget', type: 'IPodDisruptionBudget' },
  'networking.k8s.io/v1 NetworkPolicy': { model: NetworkPolicy, module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy', type: 'INetworkPolicy' },
  'autoscaling/v2 HorizontalPodAutoscaler': { model: HorizontalPodAutoscaler, module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler', type: 'IHorizontalPodAutoscaler' },
};

type KubernetesObject = { apiVersion: string; kind: string };

/** Throws with the schema's message when an object is invalid (ajv). */
export function validateWithSchemas(object: KubernetesObject): void {
  const entry = MODELS[`${object.apiVersion} ${object.kind}`];
  if (!entry) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new entry.model(object).validate();
}

/** The keys the Kubernetes types do not have, as the compiler reports them (empty: none). */
export function unknownKeys(objects: Record<string, KubernetesObject>): string[] {
  // Inside the repository, so the compiler finds kubernetes-models in node_modules.
  const dir = join(repoRoot, 'node_modules', '.cache', `forge-k8s-check-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  try {
    const lines: string[] = [];
    Object.entries(objects).forEach(([name, object], i) => {
      const entry = MODELS[`${object.apiVersion} ${object.kind}`];
      if (!entry) throw new Error(`no schema for ${object.apiVersion} ${object.kind} (${name})`);
      lines.push(`import type { ${entry.type} as T${i} } from '${entry.module}';`, `export const o${i}: T${i} = ${JSON.stringify(object, null, 1)};`);
    });
    writeFileSync(join(dir, 'objects.ts'), lines.join('\n') + '\n');
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] }, files: ['objects.ts'] }));
    const result = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' });
    const output = result.stdout + result.stderr;
    if (result.status !== 0 && !/error TS/.test(output)) throw new Error(`tsc failed: ${output}`);
    return output.split('\n').filter((l) => /error TS/.test(l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
