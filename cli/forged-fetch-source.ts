/**
 * The `fetch` a promoted sandboxed tool gets, as JavaScript source: what the
 * forge sandbox's fetch granted and no more. In the sandbox the host checked
 * every URL and every redirect hop against the tool's `fetch:HOST` entries;
 * the promoted tool does the same itself, following redirects by hand so
 * each hop is checked before it is requested, and refuses (throws) whatever
 * it cannot check — another scheme, a bad Location, too many hops. Same
 * answer shape ({ status, headers, text }), size cap and time cap as the
 * sandbox's.
 */

/** Source text defining `allowlistedFetch(url, init)` for the hosts given (none: every fetch is refused). */
export function allowlistedFetchSource(hosts: readonly string[]): string {
  return `// The forged tool's allowlist (fetch:HOST), checked on every URL and redirect hop, as the sandbox did.
const ALLOWED_HOSTS = ${JSON.stringify(hosts)};
const MAX_REDIRECTS = 5;
const MAX_RESPONSE_BYTES = 256 * 1024;
const REDIRECTS = [301, 302, 303, 307, 308];

function checkedUrl(url, base) {
  let target;
  try {
    target = new URL(String(url), base);
  } catch {
    throw new Error(\`"\${url}" is not a URL\`);
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error(\`fetch reaches http and https URLs only, not \${target.protocol}\`);
  if (!ALLOWED_HOSTS.includes(target.hostname.toLowerCase())) {
    throw new Error(\`fetch to \${target.hostname} is not in the allowlist (allowed: \${ALLOWED_HOSTS.join(', ') || 'none'})\`);
  }
  return target;
}

async function allowlistedFetch(url, init = {}) {
  let target = checkedUrl(url);
  let method = init && init.method ? String(init.method).toUpperCase() : 'GET';
  let body = init && init.body !== undefined ? String(init.body) : undefined;
  const headers = init && init.headers && typeof init.headers === 'object' ? Object.fromEntries(Object.entries(init.headers).map(([k, v]) => [k, String(v)])) : {};
  for (let hop = 0; ; hop++) {
    // redirect: 'manual' hands back the 3xx itself, so its Location is checked before anything is sent there.
    const response = await globalThis.fetch(target, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    const location = response.headers.get('location');
    if (REDIRECTS.includes(response.status) && location) {
      if (hop >= MAX_REDIRECTS) throw new Error(\`fetch followed \${MAX_REDIRECTS} redirects and stopped\`);
      target = checkedUrl(location, target);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
      }
      continue;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > MAX_RESPONSE_BYTES) throw new Error(\`the response is larger than \${MAX_RESPONSE_BYTES} bytes\`);
    return { status: response.status, headers: Object.fromEntries(response.headers), text: bytes.toString('utf8') };
  }
}
`;
}
