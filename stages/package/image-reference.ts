/**
 * An image reference as docker and skopeo write it: [REGISTRY/]REPO[:TAG][@DIGEST].
 * A first part with a dot, a colon or "localhost" is a registry; otherwise the
 * registry is Docker Hub, where one-part names live under library/.
 */
export interface ImageReference {
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

const DOCKER_HUB = 'registry-1.docker.io';

export function parseImageReference(text: string): ImageReference {
  let rest = text.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^sha256:[a-f0-9]{64}$/.test(digest)) throw new Error(`"${text}": the digest must be sha256:<64 hex digits>`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  let registry = DOCKER_HUB;
  if (parts.length > 1 && (parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost')) registry = parts.shift()!;
  if (registry === 'docker.io' || registry === 'index.docker.io') registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (!/^[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*$/.test(repository)) throw new Error(`"${text}" is not an image reference (repository names are lower-case)`);
  if (tag !== undefined && !/^[\w][\w.-]{0,127}$/.test(tag)) throw new Error(`"${text}": "${tag}" is not a valid tag`);
  if (!tag && !digest) tag = 'latest';
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

export function formatImageReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Loopback registries are spoken to over plain HTTP (as docker does for localhost); FORGE_INSECURE_REGISTRIES adds more. */
export function registryScheme(registry: string, env: NodeJS.ProcessEnv = process.env): 'http' | 'https' {
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1' || /^127\./.test(host)) return 'http';
  const insecure = (env.FORGE_INSECURE_REGISTRIES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return insecure.includes(registry) ? 'http' : 'https';
}
