/** Real HTTP servers on loopback for tests, closed after each file. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onFileEnd } from './file-cleanup.ts';

const servers: Server[] = [];
onFileEnd(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => { s.closeAllConnections(); s.close(resolve); })));
});

export interface TestServer {
  url: string;
  port: number;
  /** Requests received, in order. */
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  server: Server;
}

/** `host`: another loopback address (127.0.0.2...) stands for a second machine, as Linux answers on all of 127/8. */
export async function startServer(handler: (req: IncomingMessage & { body: string }, res: ServerResponse) => unknown, host = '127.0.0.1'): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    try {
      await handler(Object.assign(req, { body }), res);
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://${host}:${port}`, port, requests, server };
}
