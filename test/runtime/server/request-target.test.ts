/**
 * The server's own reading of a request's path and headers must give what
 * WHATWG URL parsing and `req.headers` give: a route or a token check that
 * read them differently would be a way around it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstHeader, requestPath } from '../../../runtime/server/request-target.ts';

/** A small seeded generator (mulberry32): the same corpus on every run. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the server read before (undefined where the URL parser throws). */
function viaUrl(target: string): string | undefined {
  try {
    return new URL(target, 'http://agent').pathname.replace(/\/+$/, '') || '/';
  } catch {
    return undefined;
  }
}

describe('requestPath', () => {
  it('gives the pathname a URL parser gives, for targets built from the characters that change one', () => {
    const random = seeded(7);
    // Every piece a URL parser treats specially: dot segments, percent escapes, backslashes,
    // repeated slashes, a query or fragment, characters it percent-encodes, an authority.
    const pieces = ['/', '//', '.', '..', '/./', '/../', '%2e', '%2F', '%', '%zz', '\\', '?', '?a=/b', '#', '#x', ' ', '"', '<', '{', '|', '^', '`', 'é', '\t', 'tools', 'echo', '-', '_', 'a', 'Z', '9', ':', '@', ';', '='];
    for (let i = 0; i < 5000; i++) {
      let target = '/';
      const n = 1 + Math.floor(random() * 8);
      for (let k = 0; k < n; k++) target += pieces[Math.floor(random() * pieces.length)];
      expect(requestPath(target), JSON.stringify(target)).toBe(viaUrl(target));
    }
  });

  it.each(['/', '/tools', '/tools/', '/tools/echo//', '//tools/echo', '/tools/../healthz', '/tools/%65cho', '/tools/echo?x=1', 'http://elsewhere/tools/echo', '*'])('reads %s as a URL parser does', (target) => {
    expect(requestPath(target)).toBe(viaUrl(target));
  });

  it.each(['//:', '//a b/', '//[::1/x'])('refuses %s, which no URL parser reads', (target) => {
    expect(viaUrl(target)).toBeUndefined();
    expect(requestPath(target)).toBeUndefined();
  });

  it('reads a missing target as the root', () => {
    expect(requestPath(undefined)).toBe('/');
  });
});

describe('firstHeader', () => {
  let server: Server;
  let port: number;
  const seen: IncomingMessage[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends `head` as written (raw header lines) and returns the request the server saw. */
  function sent(head: string): Promise<IncomingMessage> {
    const before = seen.length;
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\nconnection: close\r\n\r\n`));
      socket.on('error', reject);
      socket.resume();
      socket.on('close', () => (seen.length > before ? resolve(seen[before]) : reject(new Error('the server saw no request'))));
    });
  }

  it.each([
    ['a header in any case', 'POST /x HTTP/1.1\r\nhost: a\r\nAUTHORIZATION: Bearer one\r\nContent-Length: 0'],
    ['a repeated header (the first counts)', 'POST /x HTTP/1.1\r\nhost: a\r\nauthorization: Bearer one\r\nAuthorization: Bearer two\r\ncontent-length: 0'],
    ['an empty value', 'POST /x HTTP/1.1\r\nhost: a\r\nauthorization:\r\ncontent-length: 0'],
    ['padded values', 'POST /x HTTP/1.1\r\nhost: a\r\nauthorization:    Bearer three   \r\ncontent-length:  0 '],
    ['an absent header', 'POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 0'],
  ])('gives what req.headers gives for %s', async (_, head) => {
    const req = await sent(head);
    for (const name of ['authorization', 'content-length', 'content-type', 'host']) {
      expect(firstHeader(req, name), name).toBe(req.headers[name]);
    }
  });
});
