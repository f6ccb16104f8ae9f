/**
 * A request's path, read without WHATWG URL parsing when its target has
 * nothing a parser would change (most requests), and with it otherwise.
 */

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
