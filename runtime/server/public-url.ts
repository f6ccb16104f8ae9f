/**
 * --public-url / FORGE_PUBLIC_URL: the URL the agent card advertises, whose
 * origin /mcp takes as the agent's own. One that is no http(s) URL is refused
 * at start, where a typo shows, not in clients that cannot connect.
 */
export function publicUrlProblem(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    if ((parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '') return undefined;
  } catch {
    // Not a URL at all: said below.
  }
  return `--public-url (or FORGE_PUBLIC_URL) must be an http:// or https:// URL, not "${url}"`;
}
