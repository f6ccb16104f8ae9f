/**
 * The runtime's one HTTP client (tools, adapters, LLM providers). Built on
 * node:http(s) rather than fetch so that the egress policy sees every
 * resolved address and the connection uses exactly the address it allowed.
 *
 * - redirects are followed by hand (at most `maxRedirects`, default 10); a
 *   redirect to another origin drops every credential-bearing header (see
 *   isCredentialHeader), and every hop is checked by the egress policy and
 *   by the caller's own `checkHop`, when it gives one;
 * - one deadline covers the whole exchange, redirects included;
 * - the response body is capped (`truncated` says so), and gzip, deflate and
 *   br bodies are decoded;
 * - `stream()` hands over the body as it arrives (server-sent events);
 * - each client keeps its own connection pool, never Node's global one: a
 *   kept-alive socket is reused without a new lookup, so a pool shared with
 *   code outside the policy (the OTLP exporter, a build step's client) would
 *   hand a checked request a socket nobody checked;
 * - the client frames every request itself: a caller's Content-Length,
 *   Transfer-Encoding, Connection and other hop-by-hop headers are dropped,
 *   since a length without its body leaves a pooled connection out of step
 *   and the next request on it (another conversation's model call) is read
 *   as that body.
 */
import { ForgeError } from '../diagnostics.ts';
import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { EgressRefusedError, openEgress, urlPort, type EgressPolicy, type EgressRefusal } from './egress-policy.ts';
import { withTraceparent } from '../telemetry/propagate.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 10;

/** Dropped when a redirect leaves the origin they were meant for: the standard ones and the API-key headers of known services (Anthropic, Azure, Google). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key']);
/**
 * Headers that frame the request or speak to the connection (RFC 9110 §7.6.1, RFC 9112 §6): the
 * client's to set, never a caller's. Host is the URL's (see send).
 */
const CONNECTION_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection', 'http2-settings']);
/** What Node's global agent keeps since Node 19: reuse a socket for 5 s, most recently freed first. */
const POOL_OPTIONS = { keepAlive: true, timeout: 5_000, scheduling: 'lifo' } as const;
/** Names that say they carry a credential (x-auth-token, x-amz-security-token, x-vault-token, x-session-id...). */
const CREDENTIAL_NAME = /(api[-_]?key|token|secret|passw|auth|credential|session|signature)/i;

export interface HttpRequest {
  url: string | URL;
  method?: string;
  headers?: Record<string, string>;
  /**
   * Headers the caller put a credential in (an API key header an OpenAPI
   * security scheme or a pinned webhook names): dropped, like the known
   * ones, when a redirect leaves the origin.
   */
  credentialHeaders?: readonly string[];
  body?: string | Uint8Array;
  timeoutMs?: number;
  maxResponseBytes?: number;
  maxRedirects?: number;
  /**
   * The caller's own rule on where the request may go, over the egress
   * policy's (a forged tool's `fetch:HOST` list): asked about the first URL
   * and every redirect target before connecting there. A message refuses
   * that hop, and the request fails with it (FORGE_HTTP_REFUSED). Checking
   * the first URL alone would let a redirect leave the list.
   */
  checkHop?: (url: URL) => string | undefined;
  /**
   * The caller's own rule on the addresses a connection may go to, over the
   * egress policy's: asked about every address the host resolves to (or a
   * literal one) as the connection is made, so it judges the address
   * connected to, not one resolved earlier. A message refuses the request
   * (FORGE_HTTP_REFUSED). A push notification's plain-http webhook is kept
   * off public addresses by it. Such a request reuses only connections
   * opened under the same rule (the same function, so pass one, not a
   * closure made per request; a connection is reused for the same scheme,
   * host and port): a pooled one another request opened went to an address
   * this rule never saw.
   */
  checkConnectAddress?: (url: URL, address: string) => string | undefined;
  /** 'manual' hands a redirect response back unread instead of following it (fetch's `redirect: 'manual'`). */
  redirect?: 'follow' | 'manual';
  /**
   * For a stream that lives as long as its reader wants (a server-sent events
   * channel): the deadline covers connecting and the response headers only;
   * the body then ends with `signal` or close().
   */
  timeoutHeadersOnly?: boolean;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: string[];
}

export interface HttpStream {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  url: string;
  body: AsyncIterable<Buffer>;
  /** Stops reading and closes the connection. */
  close(): void;
}

/** node:http and node:https once loaded (the client's first request of each kind loads them). */
let nodeHttp: typeof import('node:http') | undefined;
let nodeHttps: typeof import('node:https') | undefined;

export class HttpError extends ForgeError {
  declare readonly code: 'FORGE_HTTP_TIMEOUT' | 'FORGE_HTTP_REDIRECTS' | 'FORGE_HTTP_REFUSED' | 'FORGE_HTTP_URL' | 'FORGE_HTTP_NETWORK' | 'FORGE_HTTP_ABORTED';
  constructor(message: string, code: HttpError['code']) {
    super(code, message);
  }
}

/** dns.lookup's shape: tests inject one to make a public-looking name resolve to a private address. */
export type HostLookup = (hostname: string, options: { all: true }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export interface HttpClientOptions {
  lookup?: HostLookup;
}

/** A client's kept-alive connections, by scheme. */
interface Pools {
  http?: HttpAgent;
  https?: HttpAgent;
}

/** The policy a client and the clients made from it share, so that one change (hot reload) reaches them all. */
interface SharedEgress {
  policy: EgressPolicy;
  /** Counts the changes: a pool opened under an earlier policy is not reused. */
  generation: number;
}

export class HttpClient {
  /** This client's connections: each was opened through its checked lookup, under its policy. */
  private pools: Pools = {};
  /**
   * The connections of requests with a caller's address check, by that check: each was opened through the
   * lookup that asked it, so a request reuses only a connection its own rule judged (the push sender's one rule).
   */
  private checkedPools = new WeakMap<NonNullable<HttpRequest['checkConnectAddress']>, Pools>();
  /** The policy generation the pools were opened under. */
  private poolGeneration = 0;
  private readonly shared: SharedEgress;

  constructor(
    egress: EgressPolicy = openEgress,
    private readonly options: HttpClientOptions = {},
    shared?: SharedEgress,
  ) {
    this.shared = shared ?? { policy: egress, generation: 0 };
    this.poolGeneration = this.shared.generation;
  }

  private get egress(): EgressPolicy {
    return this.shared.policy;
  }

  /** A client with the same policy and its own connections (the model's calls apart from the tools'). */
  withOwnPool(): HttpClient {
    return new HttpClient(this.shared.policy, this.options, this.shared);
  }

  /**
   * Puts another policy in force for this client and every client made from
   * it (forge.yaml's `egress:` saved under `forge run --dev`): the next
   * request is checked by it, and none reuses a connection opened under the
   * old one, whose address that policy allowed (idle ones close on their own).
   */
  setEgress(policy: EgressPolicy): void {
    this.shared.policy = policy;
    this.shared.generation++;
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    const { response, url, redirects, done, failure } = await this.exchange(req);
    try {
      const { body, truncated } = await readCapped(await decoded(response), req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
      return { status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: flattenHeaders(response.headers), body, truncated, url, redirects };
    } catch (err) {
      throw failure(err);
    } finally {
      response.destroy();
      done();
    }
  }

  async stream(req: HttpRequest): Promise<HttpStream> {
    const { response, url, done, failure } = await this.exchange(req);
    const body = await decoded(response);
    return {
      status: response.statusCode ?? 0,
      statusText: response.statusMessage ?? '',
      headers: flattenHeaders(response.headers),
      url,
      body: (async function* () {
        try {
          for await (const chunk of body) yield chunk as Buffer;
        } catch (err) {
          throw failure(err);
        } finally {
          done();
        }
      })(),
      close: () => {
        response.destroy();
        done();
      },
    };
  }

  /** Sends the request, following redirects; resolves with the final response, unread. */
  private async exchange(req: HttpRequest) {
    const timeoutMs = Math.min(req.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new HttpError(`request timed out after ${timeoutMs} ms`, 'FORGE_HTTP_TIMEOUT')), timeoutMs);
    const onOuterAbort = () => controller.abort(new HttpError('request was cancelled', 'FORGE_HTTP_ABORTED'));
    req.signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (req.signal?.aborted) onOuterAbort();
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onOuterAbort);
    };
    // A cancelled exchange fails with why (timeout, cancellation), not with the "aborted" of the socket it destroyed.
    const failure = (err: unknown) => (controller.signal.aborted && controller.signal.reason instanceof Error ? controller.signal.reason : err);

    try {
      let url = toUrl(req.url);
      let method = (req.method ?? 'GET').toUpperCase();
      let body = req.body;
      let headers = withTraceparent(lowerCaseKeys(req.headers ?? {}));
      const redirects: string[] = [];
      const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
      for (;;) {
        const refusal = req.checkHop?.(url);
        if (refusal) throw new HttpError(redirects.length ? `redirected to ${url.href}, refused: ${refusal}` : refusal, 'FORGE_HTTP_REFUSED');
        const response = await this.send(url, method, headers, body, controller.signal, req.checkConnectAddress);
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (!isRedirect(status) || !location || req.redirect === 'manual') {
          if (req.timeoutHeadersOnly) clearTimeout(timer);
          return { response, url: url.href, redirects, done, failure };
        }
        response.resume();
        if (redirects.length >= maxRedirects) throw new HttpError(`stopped after ${maxRedirects} redirects (last to ${location})`, 'FORGE_HTTP_REDIRECTS');
        const next = toUrl(new URL(location, url).href);
        if (next.origin !== url.origin) headers = withoutCredentials(headers, req.credentialHeaders ?? []);
        // 303, and 301/302 after a POST, turn into a GET without a body (as browsers and fetch do).
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
          delete headers['content-type'];
          delete headers['content-length'];
        }
        redirects.push(next.href);
        url = next;
      }
    } catch (err) {
      done();
      throw failure(err);
    }
  }

  private async send(url: URL, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined, signal: AbortSignal, checkConnect?: HttpRequest['checkConnectAddress']): Promise<IncomingMessage> {
    const refusal = this.egress.checkUrl(url);
    if (refusal) throw new EgressRefusedError(refusal);
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(hostname)) {
      const literalRefusal = this.egress.checkAddress(hostname, hostname, isIP(hostname) as 4 | 6, urlPort(url));
      if (literalRefusal) throw new EgressRefusedError(literalRefusal);
      const callerRefusal = checkConnect?.(url, hostname);
      if (callerRefusal) throw new HttpError(callerRefusal, 'FORGE_HTTP_REFUSED');
    }
    // The Host header is the URL's: the egress policy judged the URL's host, and a caller's own Host would
    // reach another site behind the same address (a CDN's, a shared server's virtual hosts). The framing is the client's.
    const sent = Object.fromEntries(Object.entries(headers).filter(([name]) => !CONNECTION_HEADERS.has(name)));
    const https = url.protocol === 'https:';
    // node:https is loaded at the first HTTPS request: it brings TLS, about a tenth of a
    // bundle's start, and many agents serve without ever calling out over HTTPS. node:http
    // at the first HTTP one: a process that runs a tool and calls nothing (`forge tool run`,
    // a tool worker) never loads it.
    const tls = https ? (nodeHttps ??= await import('node:https')) : undefined;
    const http = tls ?? (nodeHttp ??= await import('node:http'));
    if (this.poolGeneration !== this.shared.generation) {
      // A request still running on an old connection finishes there; none starts on one.
      this.pools = {};
      this.checkedPools = new WeakMap();
      this.poolGeneration = this.shared.generation;
    }
    // A caller's own address check sees only connections opened through the lookup below: a request it guards
    // reuses only connections opened under the same check, never one another request opened without it.
    let pools = this.pools;
    if (checkConnect) {
      pools = this.checkedPools.get(checkConnect) ?? {};
      this.checkedPools.set(checkConnect, pools);
    }
    const agent = tls ? (pools.https ??= new tls.Agent(POOL_OPTIONS)) : (pools.http ??= new http.Agent(POOL_OPTIONS));
    const options: RequestOptions & { ca?: string | Buffer | (string | Buffer)[] } = {
      method,
      headers: { ...sent, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      lookup: this.checkedLookup(hostname, urlPort(url), checkConnect && ((address) => checkConnect(url, address))),
      agent,
    };
    // Trusts what the process trusts: NODE_EXTRA_CA_CERTS, and CAs added to https.globalAgent (as corporate CA packages do).
    const ca = tls?.globalAgent.options.ca;
    if (ca) options.ca = ca;
    const send = http.request;
    return new Promise((resolve, reject) => {
      // Cancellation destroys the request (and the response being read) by
      // hand: node's `signal` option also aborts the socket, whose error
      // nobody may be listening for once the response was handed over.
      const request = send(url, options, (response) => {
        // Errors reach whoever reads the body; one that nobody reads must not crash the process.
        response.on('error', () => {});
        resolve(response);
      });
      // Destroyed without an error: the socket then has none to emit; the reason is reported below.
      const onAbort = () => request.destroy();
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      request.on('close', () => signal.removeEventListener('abort', onAbort));
      request.on('error', (err: Error) => {
        if (err instanceof EgressRefusedError || err instanceof HttpError) reject(err);
        else if (signal.aborted) reject(signal.reason ?? err);
        else reject(new HttpError(`${method} ${url.host} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`, 'FORGE_HTTP_NETWORK'));
      });
      request.end(body);
    });
  }

  /**
   * What the egress policy says about a request to `input` now, without
   * sending one: its URL, then every address its host resolves to (as a
   * request's connection would be checked). For a URL a caller hands over
   * to be called later (a push notification's webhook): checked when it is
   * given, and again by the request itself. A host that does not resolve
   * fails with FORGE_HTTP_NETWORK, an unusable URL with FORGE_HTTP_URL.
   */
  async checkDestination(input: string | URL): Promise<{ refusal?: EgressRefusal; addresses: string[] }> {
    const url = toUrl(input);
    const refusal = this.egress.checkUrl(url);
    if (refusal) return { refusal, addresses: [] };
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const family = isIP(hostname);
    const list: LookupAddress[] = family
      ? [{ address: hostname, family }]
      : await new Promise((resolve, reject) =>
          this.lookup()(hostname, { all: true }, (err, found) => {
            if (err || found.length === 0) reject(new HttpError(`${hostname} does not resolve: ${err?.code ?? 'no address'}`, 'FORGE_HTTP_NETWORK'));
            else resolve(found);
          }),
        );
    for (const a of list) {
      const addressRefusal = this.egress.checkAddress(hostname, a.address, a.family as 4 | 6, urlPort(url));
      if (addressRefusal) return { refusal: addressRefusal, addresses: list.map((entry) => entry.address) };
    }
    return { addresses: list.map((entry) => entry.address) };
  }

  private lookup(): HostLookup {
    return this.options.lookup ?? dnsLookup;
  }

  /** A dns.lookup that refuses (before connecting) any address the policy refuses. */
  private checkedLookup(host: string, port: number, checkConnect?: (address: string) => string | undefined): LookupFunction {
    return ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
      this.lookup()(hostname, { ...options, all: true }, (err, list) => {
        if (err) return callback(err, '');
        if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        for (const a of list) {
          const refusal = this.egress.checkAddress(host, a.address, a.family as 4 | 6, port);
          if (refusal) return callback(new EgressRefusedError(refusal), '');
          const callerRefusal = checkConnect?.(a.address);
          if (callerRefusal) return callback(new HttpError(callerRefusal, 'FORGE_HTTP_REFUSED'), '');
        }
        if (options.all) callback(null, list);
        else callback(null, list[0].address, list[0].family);
      });
    }) as LookupFunction;
  }
}

/** node:dns's lookup, imported at the first lookup, not when the bundle loads. */
const dnsLookup: HostLookup = (name, opts, cb) => {
  import('node:dns').then(
    (dns) => dns.lookup(name, opts, cb),
    (err: NodeJS.ErrnoException) => cb(err, []),
  );
};

function toUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new HttpError(`"${String(input)}" is not a valid URL`, 'FORGE_HTTP_URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpError(`only http and https URLs can be fetched, not ${url.protocol}`, 'FORGE_HTTP_URL');
  return url;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function withoutCredentials(headers: Record<string, string>, marked: readonly string[]): Record<string, string> {
  const markedNames = new Set(marked.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !isCredentialHeader(k) && !markedNames.has(k)));
}

/** A header the next origin must not see. Erring towards dropping: a redirect that loses a harmless header costs less than a leaked key. */
function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name) || CREDENTIAL_NAME.test(name);
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The body, decompressed; node:zlib is loaded by the first compressed response, not at start. */
async function decoded(response: IncomingMessage): Promise<Readable> {
  switch ((response.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return response.pipe((await import('node:zlib')).createGunzip());
    case 'deflate':
      return response.pipe((await import('node:zlib')).createInflate());
    case 'br':
      return response.pipe((await import('node:zlib')).createBrotliDecompress());
    default:
      return response;
  }
}

async function readCapped(stream: Readable, limit: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > limit) {
      chunks.push(buffer.subarray(0, limit - size));
      stream.destroy();
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
