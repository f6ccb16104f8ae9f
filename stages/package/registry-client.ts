/**
 * A client for the registry HTTP API v2 (the OCI distribution spec): fetch
 * manifests and blobs, upload blobs and manifests. Authentication follows the
 * spec's challenge flow: a 401 with `WWW-Authenticate: Bearer realm=...,
 * service=..., scope=...` is answered by fetching a token from the realm
 * (with credentials when there are some), then repeating the request;
 * `Basic` challenges get the credentials directly.
 *
 * Credentials: FORGE_REGISTRY_USER / FORGE_REGISTRY_PASSWORD, else the
 * `auths` entry for the registry in ~/.docker/config.json (DOCKER_CONFIG).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ForgeError } from '../../runtime/diagnostics.ts';
import { registryScheme } from './image-reference.ts';
import { MANIFEST_ACCEPT } from './media-types.ts';

/**
 * What a registry request ends with when it cannot go on: a coded diagnostic (the CLI prints the
 * code and hint, no stack). `status` is the HTTP status; none when the registry was not reached.
 */
export type RegistryCode = 'FORGE_REGISTRY_UNREACHABLE' | 'FORGE_REGISTRY_AUTH' | 'FORGE_REGISTRY_ERROR' | 'FORGE_PACKAGE_BASE';

export class RegistryError extends ForgeError {
  declare readonly code: RegistryCode;

  constructor(code: RegistryCode, message: string, hint?: string, readonly status?: number) {
    super(code, message, hint);
  }
}

export const UNREACHABLE_HINT = "check the registry's address and this machine's network";
export const CREDENTIALS_HINT = 'set FORGE_REGISTRY_USER and FORGE_REGISTRY_PASSWORD, or log in with docker login (~/.docker/config.json, DOCKER_CONFIG)';

interface Credentials {
  username: string;
  password: string;
}

export class RegistryClient {
  private readonly base: string;
  private readonly tokens = new Map<string, string>();
  private readonly credentials: Credentials | undefined;

  constructor(readonly registry: string, env: NodeJS.ProcessEnv = process.env) {
    this.base = `${registryScheme(registry, env)}://${registry}`;
    this.credentials = findCredentials(registry, env);
  }

  /** A manifest (or index) by tag or digest: its bytes, media type and digest as the registry states it. */
  async getManifest(repository: string, reference: string): Promise<{ body: Buffer; mediaType: string; digest?: string }> {
    const res = await this.request('GET', `/v2/${repository}/manifests/${reference}`, repository, 'pull', { headers: { accept: MANIFEST_ACCEPT } });
    await expectOk(res, `manifest ${repository}:${reference}`);
    const body = Buffer.from(await res.arrayBuffer());
    return { body, mediaType: res.headers.get('content-type') ?? '', digest: res.headers.get('docker-content-digest') ?? undefined };
  }

  async getBlob(repository: string, digest: string): Promise<Buffer> {
    const res = await this.request('GET', `/v2/${repository}/blobs/${digest}`, repository, 'pull');
    await expectOk(res, `blob ${digest} of ${repository}`);
    return Buffer.from(await res.arrayBuffer());
  }

  async hasBlob(repository: string, digest: string): Promise<boolean> {
    const res = await this.request('HEAD', `/v2/${repository}/blobs/${digest}`, repository, 'pull,push');
    await res.arrayBuffer().catch(() => {});
    return res.ok;
  }

  /** A monolithic upload: POST for a session, then PUT the bytes with their digest. */
  async putBlob(repository: string, digest: string, data: Uint8Array): Promise<void> {
    const started = await this.request('POST', `/v2/${repository}/blobs/uploads/`, repository, 'pull,push', { headers: { 'content-length': '0' } });
    await expectOk(started, `upload to ${repository}`);
    const location = started.headers.get('location');
    if (!location) throw new RegistryError('FORGE_REGISTRY_ERROR', `${this.registry} started an upload without a Location`);
    const url = new URL(location, this.base);
    url.searchParams.set('digest', digest);
    const put = await this.request('PUT', url.toString(), repository, 'pull,push', { headers: { 'content-type': 'application/octet-stream', 'content-length': String(data.length) }, body: data });
    await expectOk(put, `blob ${digest} to ${repository}`);
  }

  async putManifest(repository: string, reference: string, mediaType: string, body: Uint8Array): Promise<string | undefined> {
    const res = await this.request('PUT', `/v2/${repository}/manifests/${reference}`, repository, 'pull,push', { headers: { 'content-type': mediaType }, body });
    await expectOk(res, `manifest ${repository}:${reference}`);
    return res.headers.get('docker-content-digest') ?? undefined;
  }

  private async request(method: string, pathOrUrl: string, repository: string, actions: string, init: { headers?: Record<string, string>; body?: Uint8Array } = {}): Promise<Response> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.base}${pathOrUrl}`;
    const scope = `repository:${repository}:${actions}`;
    const send = (authorization?: string) =>
      fetch(url, { method, headers: { ...init.headers, ...(authorization ? { authorization } : {}) }, body: init.body, redirect: 'follow' }).catch((err: Error) => {
        throw new RegistryError('FORGE_REGISTRY_UNREACHABLE', `cannot reach ${this.registry}: ${(err.cause as Error | undefined)?.message ?? err.message}`, UNREACHABLE_HINT);
      });
    const cached = this.tokens.get(scope);
    let res = await send(cached);
    if (res.status !== 401) return res;
    const challenge = res.headers.get('www-authenticate') ?? '';
    await res.arrayBuffer().catch(() => {});
    const authorization = await this.authorize(challenge, scope);
    if (!authorization) throw new RegistryError('FORGE_REGISTRY_AUTH', `${this.registry} asks for credentials for ${repository}`, CREDENTIALS_HINT, 401);
    this.tokens.set(scope, authorization);
    res = await send(authorization);
    if (res.status === 401) throw new RegistryError('FORGE_REGISTRY_AUTH', `${this.registry} refused the credentials for ${repository}`, CREDENTIALS_HINT, 401);
    return res;
  }

  private async authorize(challenge: string, scope: string): Promise<string | undefined> {
    const [scheme] = challenge.split(' ', 1);
    const basic = this.credentials ? `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}` : undefined;
    if (scheme.toLowerCase() === 'basic') return basic;
    if (scheme.toLowerCase() !== 'bearer') return undefined;
    const params = parseChallenge(challenge.slice(scheme.length));
    if (!params.realm) throw new RegistryError('FORGE_REGISTRY_ERROR', `${this.registry} sent a Bearer challenge without a realm`);
    const tokenUrl = new URL(params.realm);
    if (params.service) tokenUrl.searchParams.set('service', params.service);
    tokenUrl.searchParams.set('scope', params.scope ?? scope);
    const res = await fetch(tokenUrl, { headers: basic ? { authorization: basic } : {} }).catch((err: Error) => {
      throw new RegistryError('FORGE_REGISTRY_UNREACHABLE', `cannot reach the token service ${tokenUrl.origin}: ${(err.cause as Error | undefined)?.message ?? err.message}`, UNREACHABLE_HINT);
    });
    await expectOk(res, `a token from ${tokenUrl.origin}`);
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new RegistryError('FORGE_REGISTRY_ERROR', `${tokenUrl.origin} answered without a token`);
    return `Bearer ${token}`;
  }
}

/** `realm="https://auth.docker.io/token",service="registry.docker.io",scope="..."` → its parameters. */
export function parseChallenge(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const m of text.matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) params[m[1].toLowerCase()] = m[2];
  return params;
}

async function expectOk(res: Response, what: string): Promise<void> {
  if (res.ok) return;
  let detail = '';
  try {
    const body = (await res.json()) as { errors?: { code?: string; message?: string }[] };
    detail = body.errors?.map((e) => `${e.code}: ${e.message}`).join('; ') ?? '';
  } catch {
    /* not a JSON error body */
  }
  const message = `${what}: HTTP ${res.status}${detail ? ` (${detail})` : ''}`;
  if (res.status === 401 || res.status === 403) throw new RegistryError('FORGE_REGISTRY_AUTH', message, CREDENTIALS_HINT, res.status);
  throw new RegistryError('FORGE_REGISTRY_ERROR', message, undefined, res.status);
}

function findCredentials(registry: string, env: NodeJS.ProcessEnv): Credentials | undefined {
  if (env.FORGE_REGISTRY_USER && env.FORGE_REGISTRY_PASSWORD) return { username: env.FORGE_REGISTRY_USER, password: env.FORGE_REGISTRY_PASSWORD };
  const file = join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    const auths = (JSON.parse(readFileSync(file, 'utf8')) as { auths?: Record<string, { auth?: string }> }).auths ?? {};
    const keys = registry === 'registry-1.docker.io' ? ['https://index.docker.io/v1/', 'docker.io', 'index.docker.io', registry] : [registry, `https://${registry}`];
    for (const key of keys) {
      const auth = auths[key]?.auth;
      if (!auth) continue;
      const [username, ...password] = Buffer.from(auth, 'base64').toString('utf8').split(':');
      return { username, password: password.join(':') };
    }
  } catch {
    /* an unreadable docker config is the same as none */
  }
  return undefined;
}
