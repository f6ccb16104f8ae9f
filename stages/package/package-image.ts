/**
 * `forge package`: an OCI image of a built bundle without a container daemon,
 * the way ko and jib do it. The base image is pinned by digest and cached;
 * the bundle (and the Python environment, when the agent has Python
 * dependencies) become deterministic layers on top; the config names the
 * user, work dir, entrypoint and the build manifest's digest. The same
 * inputs give the same image digest.
 *
 * Before anything is built the base is checked for what the tools need to
 * run: bubblewrap for the tool sandbox (base-sandbox.ts) and the
 * interpreters the tools start (base-interpreters.ts). The image's sandbox
 * mode is forge.yaml's, as in the Dockerfile's image: with `auto`, bubblewrap
 * where the container lets it make namespaces, else a warning at start and
 * `/readyz` saying so (FORGE_SANDBOX=required at `docker run` refuses that);
 * `required` refuses to start there; `off` runs tools unsandboxed. Packaged
 * with `noSandbox`, the image sets FORGE_SANDBOX=off (said at every start),
 * unless forge.yaml says off already; forge.yaml's `required` refuses
 * `noSandbox` (SandboxModeConflict).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxSettings } from '../../runtime/exec/tool-sandbox.ts';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { DiagnosticError, hasErrors, type Diagnostic } from '../../runtime/diagnostics.ts';
import { BaseFiles } from './base-files.ts';
import { missingInterpreters } from './base-interpreters.ts';
import { baseSandboxDiagnostics } from './base-sandbox.ts';
import { resolveBaseImage, type Platform } from './base-image.ts';
import { BlobCache } from '../blob-cache.ts';
import { bundleLayerEntries } from './bundle-layer.ts';
import { assembleImage, BUNDLE_DIR, WORK_DIR } from './image-config.ts';
import { imageBlobs, type ImageBlobs } from './image-blobs.ts';
import { type ImageReference } from './image-reference.ts';
import { writeLayer, type Layer } from './layer-writer.ts';
import type { Descriptor } from './media-types.ts';
import { mcpLayer } from './mcp-layer.ts';
import { pythonLayer } from './python-layer.ts';

export interface PackageOptions {
  bundleDir: string;
  base: ImageReference;
  platform: Platform;
  cache: BlobCache;
  /** uid:gid the agent runs as (numeric: the base needs no passwd entry). */
  user: string;
  sourceDateEpoch?: number;
  /** Package a base without bubblewrap: the image runs tools unsandboxed and says so (FORGE_SANDBOX=off). Refused with forge.yaml's `sandbox: required`. */
  noSandbox?: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface PackagedImage {
  manifest: Buffer;
  manifestDescriptor: Descriptor;
  blobs: ImageBlobs;
  baseDigest: string;
  baseSource: 'registry' | 'cache';
  /** Compressed sizes: the whole image, and the layers Forge added. */
  size: { total: number; added: number };
  agent: AgentManifest;
  /** What the image's tools run in (label dev.forge.sandbox). */
  sandbox: ImageSandboxMode;
  /** Problems with the base that do not stop packaging (no prlimit). */
  warnings: Diagnostic[];
}

/**
 * `required`: bubblewrap, else the agent refuses to start (forge.yaml's `sandbox: required`);
 * `auto`: bubblewrap where the container allows it, else a warning; `off`: never
 * (forge.yaml's `sandbox: off`, or --no-sandbox).
 */
export type ImageSandboxMode = SandboxSettings['mode'];

/** --no-sandbox asked of an agent whose forge.yaml requires the sandbox: the caller's mistake, not the base's. */
export class SandboxModeConflict extends Error {
  readonly hint = "drop --no-sandbox and use a base with bubblewrap; or, if the agent's tools may run unsandboxed, change forge.yaml's sandbox: to auto or off";
  constructor() {
    super("--no-sandbox cannot package this agent: its forge.yaml says sandbox: required, which the image's FORGE_SANDBOX=off would override");
    this.name = 'SandboxModeConflict';
  }
}

/** The image's sandbox mode, and the FORGE_SANDBOX it sets (only for --no-sandbox over a mode that is not off already). */
export function imageSandbox(agent: Pick<AgentManifest, 'sandbox'>, noSandbox = false): { mode: ImageSandboxMode; env: Record<string, string> } {
  const declared = agent.sandbox?.mode ?? 'auto';
  if (!noSandbox) return { mode: declared, env: {} };
  if (declared === 'required') throw new SandboxModeConflict();
  return { mode: 'off', env: declared === 'off' ? {} : { FORGE_SANDBOX: 'off' } };
}

export async function packageImage(options: PackageOptions): Promise<PackagedImage> {
  const { bundleDir } = options;
  for (const file of ['agent.json', 'runtime.mjs', 'build-manifest.json']) {
    if (!existsSync(join(bundleDir, file))) throw new Error(`${bundleDir} is not a build output (no ${file}); run forge build --prod first`);
  }
  const agent = JSON.parse(readFileSync(join(bundleDir, 'agent.json'), 'utf8')) as AgentManifest;
  const sandbox = imageSandbox(agent, options.noSandbox);
  const buildManifestDigest = `sha256:${createHash('sha256').update(readFileSync(join(bundleDir, 'build-manifest.json'))).digest('hex')}`;
  const [uid, gid] = parseUser(options.user);
  const mtime = options.sourceDateEpoch ?? 0;

  const base = await resolveBaseImage(options.base, options.platform, options.cache, options.env);
  options.log?.(`base ${options.base.registry}/${options.base.repository}@${base.digest}${base.source === 'cache' ? ' (from the cache: the registry did not answer)' : ''}`);

  // What the tools need from the base, all of it reported at once, before pip or npm run.
  const files = await BaseFiles.of(base, options.cache);
  const problems = sandbox.mode !== 'off' ? baseSandboxDiagnostics(base, files) : [];
  // With declared packages the venv layer gives Python (and stops with its own message when the base has none).
  const coveredByLayer = (agent.python?.dependencies.length ?? 0) > 0;
  problems.push(...(await missingInterpreters(agent, { bundleDir, base, files, python: { coveredByLayer } })));
  if (hasErrors(problems)) throw new DiagnosticError(problems);

  const layers: (Layer & { comment: string })[] = [];
  // --no-sandbox says so at every start; otherwise forge.yaml's mode, as in the Dockerfile's image.
  const env: Record<string, string> = { NODE_ENV: 'production', FORGE_WORKDIR: WORK_DIR, ...sandbox.env };
  const python = await pythonLayer(agent, base, options.cache, { mtime, env: options.env, log: options.log });
  if (python) {
    layers.push({ ...python.layer, comment: python.comment });
    Object.assign(env, python.env);
  }
  const mcp = await mcpLayer(agent, { mtime, env: options.env, log: options.log });
  if (mcp) {
    layers.push({ ...mcp.layer, comment: mcp.comment });
    Object.assign(env, mcp.env);
  }
  layers.push({ ...(await writeLayer(bundleLayerEntries(bundleDir, { uid, gid }), mtime)), comment: `the bundle in ${BUNDLE_DIR}` });

  const image = assembleImage(base, layers, {
    agentId: agent.agent_id,
    version: agent.version,
    description: agent.description,
    forgeVersion: agent.build.forge_version,
    buildManifestDigest,
    user: `${uid}:${gid}`,
    env,
    sandbox: sandbox.mode,
    createdSeconds: mtime,
  });
  const fresh = new Map<string, Buffer>([[image.configDescriptor.digest, image.config], ...layers.map((l) => [l.descriptor.digest, l.blob] as [string, Buffer])]);
  const descriptors = [image.configDescriptor, ...base.layers, ...layers.map((l) => l.descriptor)];
  const added = layers.reduce((n, l) => n + l.descriptor.size, 0);
  return {
    manifest: image.manifest,
    manifestDescriptor: image.manifestDescriptor,
    blobs: imageBlobs(options.cache, fresh, descriptors),
    baseDigest: base.digest,
    baseSource: base.source,
    size: { total: descriptors.reduce((n, d) => n + d.size, 0) + image.manifest.length, added },
    agent,
    sandbox: sandbox.mode,
    warnings: problems,
  };
}

function parseUser(text: string): [number, number] {
  const m = /^(\d+)(?::(\d+))?$/.exec(text);
  if (!m) throw new Error(`--user "${text}" must be numeric (uid or uid:gid): the image may have no passwd file`);
  return [Number(m[1]), Number(m[2] ?? m[1])];
}
