/**
 * The two things every request's route needs from node:http, read without
 * the general machinery a plain call does not need: its path (WHATWG URL
 * parsing only when the target has something to normalize) and a header's
 * value (one scan of rawHeaders instead of building `req.headers`, whose
 * getter lower-cases and copies every header of every request).
 */
import type { IncomingMessage } from 'node:http';

/** A request target that a URL parser would give back unchanged as its pathname: no query, dot, percent, backslash or leading `//`. */
const PLAIN_PATH = /^\/(?!\/)[\w\-/]*$/;

/**
 * The request's path as `new URL(req.url, base).pathname` gives it, without
 * trailing slashes ('/' for the root); undefined for a target no URL parser
 * accepts (`//:`, an authority with a bad host).
 */
export function requestPath(url: string | undefined): string | undefined {
  const target = url ?? '/';
  let pathname = target;
  if (!PLAIN_PATH.test(target)) {
    try {
      pathname = new URL(target, 'http://agent').pathname;
    } catch {
      return undefined;
    }
  }
  let end = pathname.length;
  while (end > 0 && pathname.charCodeAt(end - 1) === 0x2f) end--;
  return end === 0 ? '/' : pathname.slice(0, end);
}

/**
 * The first value of header `name` (lower case), as `req.headers[name]`
 * gives it for the headers Node keeps only once (authorization,
 * content-length, content-type...), or undefined.
 */
export function firstHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toLowerCase() === name) return raw[i + 1];
  }
  return undefined;
}
