/**
 * readBody's deadlines apply to a body still arriving; one the parser has
 * already taken in whole arms no timers (the README's promise for a warm call).
 * The slow-client cases (a body that trickles or stalls) are in http-edges.test.ts.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBody } from '../../../runtime/server/request-body.ts';

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

let server: Server;
let port: number;
let onRequest: (req: IncomingMessage) => Promise<string>;

beforeAll(async () => {
  server = createServer((req, res) => {
    void onRequest(req).then((text) => res.end(text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `head` and then, after `gapMs`, `rest`; resolves with the answer. */
function send(head: string, rest: string, gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      if (rest) setTimeout(() => socket.write(rest), gapMs);
    });
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

describe('readBody', () => {
  it('arms no timers for a body that came whole with its headers', async () => {
    let armed = -1;
    onRequest = async (req) => {
      await new Promise((resolve) => setImmediate(resolve)); // the parser has taken in the rest of the packet
      const before = timers();
      const body = readBody(req, 1024, { idleTimeoutMs: 60_000, totalTimeoutMs: 60_000 });
      armed = timers() - before;
      return (await body).toString();
    };
    const answer = await send('POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello', '', 0);
    expect(answer).toMatch(/hello$/);
    expect(armed).toBe(0);
  });

  it('arms its deadlines for a body still on its way, and reads it whole', async () => {
    let armed = -1;
    onRequest = async (req) => {
      const before = timers();
      const body = readBody(req, 1024, { idleTimeoutMs: 60_000, totalTimeoutMs: 60_000 });
      armed = timers() - before;
      return (await body).toString();
    };
    const answer = await send('POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhe', 'llo', 50);
    expect(answer).toMatch(/hello$/);
    expect(armed).toBe(2);
  });
});
