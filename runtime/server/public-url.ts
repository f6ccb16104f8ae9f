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

/**
 * The public URL asked for: --public-url, else FORGE_PUBLIC_URL. The variable set but empty (a compose
 * file's `FORGE_PUBLIC_URL:`, a Helm value left blank) is no URL asked for, as the other FORGE_* settings
 * take an empty value (FORGE_AUTH_TOKEN, FORGE_STATE_URL): not refused as "" is.
 */
export function publicUrlSetting(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag ?? (env.FORGE_PUBLIC_URL?.trim() || undefined);
}
