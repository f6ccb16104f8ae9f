/**
 * A small load balancer on loopback, as a Kubernetes Service behaves:
 * requests go round-robin to the backends whose /readyz answers 200
 * (checked every `probeMs`, like the endpoints controller), each on a fresh
 * connection; a backend that refuses the connection (it is gone) is skipped
 * and the request goes to the next one — it was never sent, so that is safe.
 * Each response says which backend served it (`x-backend`).
 */
import { request, type IncomingMessage } from 'node:http';
import { startServer, type TestServer } from './http-server.ts';

export interface RoundRobinProxy extends TestServer {
  add(url: string): void;
  remove(url: string): void;
  /** Backends currently taking requests. */
  ready(): string[];
  /** How many requests each backend served. */
  served: Map<string, number>;
  close(): Promise<void>;
}

interface Backend {
  url: string;
  ready: boolean;
}

export async function startRoundRobinProxy(urls: string[], options: { probeMs?: number } = {}): Promise<RoundRobinProxy> {
  const backends: Backend[] = [];
  const served = new Map<string, number>();
  let next = 0;

  const probe = async (backend: Backend) => {
    try {
      const response = await fetch(`${backend.url}/readyz`, { signal: AbortSignal.timeout(2000) });
      backend.ready = response.status === 200;
      await response.arrayBuffer();
    } catch {
      backend.ready = false;
    }
  };
  const add = (url: string) => {
    const backend = { url, ready: false };
    backends.push(backend);
    void probe(backend);
  };
  for (const url of urls) add(url);
  const timer = setInterval(() => backends.forEach((b) => void probe(b)), options.probeMs ?? 100);

  const forward = (backend: Backend, method: string, path: string, headers: IncomingMessage['headers'], body: Buffer) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const target = new URL(path, backend.url);
      const outgoing = request(target, { method, headers: { ...headers, host: target.host, connection: 'close' }, agent: false }, resolve);
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server = await startServer(async (req, res) => {
    const body = Buffer.from(req.body);
    const tried = new Set<Backend>();
    for (;;) {
      const candidates = backends.filter((b) => b.ready && !tried.has(b));
      if (!candidates.length) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready backend');
        return;
      }
      const backend = candidates[next++ % candidates.length];
      tried.add(backend);
      let response: IncomingMessage;
      try {
        response = await forward(backend, req.method ?? 'GET', req.url ?? '/', req.headers, body);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
          backend.ready = false;
          continue; // never reached the backend: another one may take it
        }
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`backend ${backend.url} failed: ${(err as Error).message}`);
        return;
      }
      served.set(backend.url, (served.get(backend.url) ?? 0) + 1);
      const headers = { ...response.headers, 'x-backend': backend.url };
      delete headers.connection;
      res.writeHead(response.statusCode ?? 502, headers);
      response.pipe(res);
      return;
    }
  });
  return Object.assign(server, {
    add,
    remove: (url: string) => {
      const index = backends.findIndex((b) => b.url === url);
      if (index >= 0) backends.splice(index, 1);
    },
    ready: () => backends.filter((b) => b.ready).map((b) => b.url),
    served,
    close: async () => {
      clearInterval(timer);
      server.server.closeAllConnections();
      await new Promise((resolve) => server.server.close(resolve));
    },
  });
}
