/**
 * The server's own reading of a request's path must give what WHATWG URL
 * parsing gives: a route that read it differently would be a way around it.
 */
import { describe, expect, it } from 'vitest';
import { requestPath } from '../../../runtime/server/request-target.ts';

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
