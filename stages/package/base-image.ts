/**
 * The base image, pinned by digest: a tag is resolved once online (and the
 * answer remembered), an index is narrowed to the wanted platform, and the
 * manifest, config and every layer are kept in the blob cache. Later runs —
 * and runs without a network — read them from the cache.
 */
import type { BlobCache } from '../blob-cache.ts';
import { sha256Digest } from '../blob-cache.ts';
import { formatImageReference, type ImageReference } from './image-reference.ts';
import { isIndex, ociLayerType, type Descriptor, type ImageIndex, type ImageManifest } from './media-types.ts';
import { RegistryClient, RegistryError, UNREACHABLE_HINT } from './registry-client.ts';

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface ImageConfigFile {
  architecture: string;
  os: string;
  variant?: string;
  config?: Record<string, unknown> & { Env?: string[]; Labels?: Record<string, string> };
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: Record<string, unknown>[];
  [key: string]: unknown;
}

export interface BaseImage {
  reference: ImageReference;
  /** The platform manifest's digest: what the image is pinned to. */
  digest: string;
  config: ImageConfigFile;
  layers: Descriptor[];
  /** How the base was found: asked the registry, or only the cache. */
  source: 'registry' | 'cache';
}

export function hostPlatform(): Platform {
  const arch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return { os: 'linux', architecture: arch[process.arch] ?? process.arch, ...(process.arch === 'arm64' ? { variant: 'v8' } : {}) };
}

export function parsePlatform(text: string): Platform {
  const [os, architecture, variant] = text.split('/');
  if (!os || !architecture) throw new Error(`"${text}" is not a platform (os/arch[/variant], e.g. linux/amd64)`);
  return { os, architecture, ...(variant ? { variant } : {}) };
}

const OTHER_BASE = 'or choose another base with --base IMAGE or FORGE_BASE_IMAGE';

export async function resolveBaseImage(reference: ImageReference, platform: Platform, cache: BlobCache, env: NodeJS.ProcessEnv = process.env): Promise<BaseImage> {
  try {
    return await pullBaseImage(reference, platform, cache, env);
  } catch (err) {
    throw err instanceof RegistryError ? asBaseError(err, formatImageReference(reference)) : err;
  }
}

/** A registry's refusal as it concerns the base image: with the ways to another base (the registry's own words kept). */
function asBaseError(err: RegistryError, name: string): RegistryError {
  if (err.status === 404) {
    return new RegistryError('FORGE_PACKAGE_BASE', `the base image ${name} is not in the registry (${err.message})`, `check its name and tag (without --base: forge.yaml's runtime:), ${OTHER_BASE}`, err.status);
  }
  if (err.code === 'FORGE_REGISTRY_UNREACHABLE') {
    return new RegistryError(err.code, `${err.message} (pulling the base image ${name})`, `${UNREACHABLE_HINT}: a base pulled once is cached and works offline; ${OTHER_BASE}`);
  }
  return new RegistryError(err.code, `${err.message} (pulling the base image ${name})`, `${err.hint ? `${err.hint}; ` : ''}${OTHER_BASE}`, err.status);
}

async function pullBaseImage(reference: ImageReference, platform: Platform, cache: BlobCache, env: NodeJS.ProcessEnv): Promise<BaseImage> {
  const client = new RegistryClient(reference.registry, env);
  const name = formatImageReference(reference);
  let source: BaseImage['source'] = 'registry';
  let top = reference.digest;
  if (!top) {
    try {
      const got = await client.getManifest(reference.repository, reference.tag!);
      top = sha256Digest(got.body);
      cache.put(top, got.body);
      cache.rememberTag(`${name}|${platformKey(platform)}`, top);
    } catch (err) {
      const recalled = cache.recalledTag(`${name}|${platformKey(platform)}`);
      if (!(err instanceof RegistryError) || err.status !== undefined || !recalled) throw err;
      top = recalled; // offline: the digest this tag had when last seen
      source = 'cache';
    }
  }
  const manifestBytes = await blob(client, reference.repository, top, cache, () => client.getManifest(reference.repository, top!).then((m) => m.body));
  let parsed = JSON.parse(manifestBytes.toString('utf8')) as (ImageManifest | ImageIndex) & { mediaType?: string };
  let digest = top;
  if (isIndex(parsed.mediaType) || 'manifests' in parsed) {
    const wanted = (parsed as ImageIndex).manifests.find((m) => m.platform && m.platform.os === platform.os && m.platform.architecture === platform.architecture && (!platform.variant || !m.platform.variant || m.platform.variant === platform.variant));
    if (!wanted) {
      const offered = (parsed as ImageIndex).manifests.map((m) => (m.platform ? platformKey(m.platform) : '?')).join(', ');
      throw new RegistryError('FORGE_PACKAGE_BASE', `${name} has no image for ${platformKey(platform)} (it has ${offered})`, `choose one of those with --platform, ${OTHER_BASE}`);
    }
    digest = wanted.digest;
    const bytes = await blob(client, reference.repository, digest, cache, () => client.getManifest(reference.repository, digest).then((m) => m.body));
    parsed = JSON.parse(bytes.toString('utf8')) as ImageManifest;
  }
  const manifest = parsed as ImageManifest;
  const configBytes = await blob(client, reference.repository, manifest.config.digest, cache);
  const config = JSON.parse(configBytes.toString('utf8')) as ImageConfigFile;
  // Fetched into the cache unless there already; not read (tens of MB each): they are copied or sent from there.
  for (const layer of manifest.layers) if (!cache.has(layer.digest)) await blob(client, reference.repository, layer.digest, cache);
  return {
    reference,
    digest,
    config,
    layers: manifest.layers.map((l) => ({ mediaType: ociLayerType(l.mediaType), digest: l.digest, size: l.size })),
    source,
  };
}

/** A blob from the cache, or from the registry into the cache (checked against its digest). */
async function blob(client: RegistryClient, repository: string, digest: string, cache: BlobCache, fetchIt?: () => Promise<Buffer>): Promise<Buffer> {
  const cached = cache.get(digest);
  if (cached) return cached;
  const data = await (fetchIt ? fetchIt() : client.getBlob(repository, digest));
  cache.put(digest, data);
  return data;
}

function platformKey(p: Platform): string {
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}
