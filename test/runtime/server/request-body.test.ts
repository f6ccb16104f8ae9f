/**
 * readBody's deadlines apply to a body still arriving; one the parser has
 * taken in whole by the next turn of the loop arms no timers (the README's
 * promise for a warm call).
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

/**
 * Answers each request with its body, read by readBody once `ready` resolves. `armed()` is how many
 * timers that read had running: at once, and a turn of the loop later if the body had not ended by then.
 */
function serveBodies(ready: () => Promise<unknown>): { armed(): { atOnce: number; aTurnLater?: number } } {
  let armed: { atOnce: number; aTurnLater?: number } = { atOnce: -1 };
  onRequest = async (req) => {
    await ready();
    const before = timers();
    let ended = false;
    const body = readBody(req, 1024, { idleTimeoutMs: 60_000, totalTimeoutMs: 60_000 }).finally(() => (ended = true));
    armed = { atOnce: timers() - before };
    await new Promise((resolve) => setImmediate(resolve));
    if (!ended) armed.aTurnLater = timers() - before;
    return (await body).toString();
  };
  return { armed: () => armed };
}

const HEAD = 'POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\nconnection: close\r\n\r\n';

describe('readBody', () => {
  it('arms no timers for a body that came whole with its headers', async () => {
    // After one turn of the loop the parser has taken in the rest of the packet.
    const served = serveBodies(() => new Promise((resolve) => setImmediate(resolve)));
    expect(await send(`${HEAD}hello`, '', 0)).toMatch(/hello$/);
    expect(served.armed()).toEqual({ atOnce: 0 });
  });

  it('arms no timers for a whole body read in the turn its request came in, after an await, as the server reads it', async () => {
    // The request event comes before the parser has read the body that follows the headers in
    // the same packet: req.complete is still false here, and the body has ended a turn later.
    const served = serveBodies(async () => {});
    expect(await send(`${HEAD}hello`, '', 0)).toMatch(/hello$/);
    expect(served.armed()).toEqual({ atOnce: 0 });
  });

  it('arms its deadlines for a body still on its way a turn later, and reads it whole', async () => {
    const served = serveBodies(async () => {});
    expect(await send(`${HEAD}he`, 'llo', 50)).toMatch(/hello$/);
    expect(served.armed()).toEqual({ atOnce: 0, aTurnLater: 2 });
  });
});
