/**
 * Half of a UTF-16 surrogate pair standing alone. A JavaScript string may
 * hold one (JSON.parse makes one of "\ud800"); UTF-8 has no form for it, so
 * neither has anything that takes text as UTF-8 bytes: a process's
 * arguments and environment, a script, Postgres's text. (String's
 * isWellFormed would say the same; the lib this project compiles against
 * predates it, and the escaping in postgres-text.ts needs the pattern.)
 */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Where to cut `text` to at most `max` characters without leaving half of a surrogate pair at the
 * end: an emoji cut in two would be half of one, which some providers refuse in a request's JSON.
 */
export function cutEnd(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const last = text.charCodeAt(max - 1);
  return last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
}
