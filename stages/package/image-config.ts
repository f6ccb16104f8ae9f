/**
 * The new image's config and manifest: the base's config with the agent's
 * settings on top — a non-root user, the work dir, the entrypoint, the
 * environment, the port, the health check (Docker's Healthcheck field, which
 * OCI runtimes ignore, and a label saying what it checks), and labels naming
 * the build manifest's digest — and the base's layers followed by ours.
 * Nothing here reads a clock: `created` is SOURCE_DATE_EPOCH or the epoch.
 */
import type { BaseImage, ImageConfigFile } from './base-image.ts';
import { sha256Digest } from '../blob-cache.ts';
import { formatImageReference } from './image-reference.ts';
import { OCI_CONFIG, OCI_MANIFEST, type Descriptor, type ImageManifest } from './media-types.ts';
import type { Layer } from './layer-writer.ts';
import type { ImageSandboxMode } from './package-image.ts';

export const BUNDLE_DIR = '/opt/agent';
export const WORK_DIR = '/workspace';
export const PORT = 8080;

export interface AgentImageSettings {
  agentId: string;
  version: string;
  description: string;
  forgeVersion: string;
  buildManifestDigest: string;
  user: string;
  env: Record<string, string>;
  /** The mode the image's tools run in, from forge.yaml and --no-sandbox (label dev.forge.sandbox). */
  sandbox: ImageSandboxMode;
  createdSeconds: number;
}

export interface BuiltImage {
  config: Buffer;
  configDescriptor: Descriptor;
  manifest: Buffer;
  manifestDescriptor: Descriptor;
}

export function assembleImage(base: BaseImage, layers: readonly (Layer & { comment: string })[], settings: AgentImageSettings): BuiltImage {
  const created = new Date(settings.createdSeconds * 1000).toISOString();
  const baseConfig = base.config.config ?? {};
  const env = mergeEnv(baseConfig.Env ?? [], settings.env);
  const labels: Record<string, string> = {
    ...(baseConfig.Labels ?? {}),
    'org.opencontainers.image.title': settings.agentId,
    'org.opencontainers.image.version': settings.version,
    'org.opencontainers.image.description': settings.description,
    'org.opencontainers.image.base.name': formatImageReference({ ...base.reference, digest: undefined }),
    'org.opencontainers.image.base.digest': base.digest,
    'dev.forge.version': settings.forgeVersion,
    'dev.forge.sandbox': settings.sandbox,
    'dev.forge.build-manifest.digest': settings.buildManifestDigest,
    'dev.forge.healthcheck': `GET http://127.0.0.1:${PORT}/healthz (podman keeps HEALTHCHECK only with --format docker)`,
  };
  const config: ImageConfigFile = {
    created,
    architecture: base.config.architecture,
    os: base.config.os,
    ...(base.config.variant ? { variant: base.config.variant } : {}),
    config: {
      User: settings.user,
      Env: env,
      Entrypoint: ['node', `${BUNDLE_DIR}/runtime.mjs`],
      Cmd: ['serve', '--host', '0.0.0.0', '--port', String(PORT)],
      WorkingDir: WORK_DIR,
      ExposedPorts: { [`${PORT}/tcp`]: {} },
      Labels: sortKeys(labels),
      StopSignal: 'SIGTERM',
      Healthcheck: {
        Test: ['CMD', 'node', '-e', `fetch('http://127.0.0.1:${PORT}/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`],
        Interval: 30_000_000_000,
        Timeout: 3_000_000_000,
      },
    },
    rootfs: { type: 'layers', diff_ids: [...base.config.rootfs.diff_ids, ...layers.map((l) => l.diffId)] },
    history: [...(base.config.history ?? []), ...layers.map((l) => ({ created, created_by: `forge package: ${l.comment}`, comment: l.comment }))],
  };
  const configBytes = Buffer.from(JSON.stringify(config));
  const configDescriptor: Descriptor = { mediaType: OCI_CONFIG, digest: sha256Digest(configBytes), size: configBytes.length };
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: configDescriptor,
    layers: [...base.layers, ...layers.map((l) => l.descriptor)],
    annotations: {
      'org.opencontainers.image.base.name': formatImageReference({ ...base.reference, digest: undefined }),
      'org.opencontainers.image.base.digest': base.digest,
    },
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest));
  return { config: configBytes, configDescriptor, manifest: manifestBytes, manifestDescriptor: { mediaType: OCI_MANIFEST, digest: sha256Digest(manifestBytes), size: manifestBytes.length } };
}

/** The base's variables, with ours replacing any of the same name; order kept, ours appended sorted. */
function mergeEnv(base: readonly string[], ours: Record<string, string>): string[] {
  const kept = base.filter((line) => !(line.split('=')[0] in ours));
  return [...kept, ...Object.keys(ours).sort().map((k) => `${k}=${ours[k]}`)];
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
