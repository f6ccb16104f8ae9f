/**
 * A state store's URL as it may be printed: scheme, user, host, port and
 * database. Never a password, wherever it is written (after the user, with
 * an "@" in it, or as the query's `password=`): the query is left out.
 */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username || parsed.password ? `${parsed.username}${parsed.password ? ':***' : ''}@` : '';
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${parsed.search ? '?…' : ''}`;
  } catch {
    return `${url.slice(0, Math.max(0, url.indexOf(':')))}:…`;
  }
}
