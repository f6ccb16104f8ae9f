/**
 * Regular expressions from others — a forged tool's schema `pattern`, an
 * MCP server's or an OpenAPI document's, a model's grep_search pattern —
 * run on the server's one thread: a pattern that backtracks without bound
 * (`^(a+)+$` against forty a's and a "!") held every front end, /healthz
 * and SIGTERM for as long as it ran.
 *
 * V8 falls back to its linear-time engine once a match backtracks too much
 * (guardRegExpBacktracking, process-wide; set by the first schema pattern
 * compiled, and by the CLI before its code cache is read), which covers every pattern that
 * engine can run: not backreferences or lookarounds, and nothing under the
 * `u` flag. So schema patterns compile without `u` (schemaRegExp) unless
 * they need it, and a pattern from an untrusted source that only the
 * backtracking engine can run is refused (backtrackingOnly) — or, in an
 * MCP server's or an OpenAPI document's schema, not checked here at all
 * (tools/local-schema.ts).
 */
import { createRequire } from 'node:module';

let guarded = false;

/** Makes every RegExp of this process fall back to the linear-time engine on excessive backtracking. */
export function guardRegExpBacktracking(): void {
  if (guarded) return;
  guarded = true;
  // node:v8 is loaded here, not with this module: it brings node's streams, a cost `forge --version` need not pay.
  (createRequire(import.meta.url)('node:v8') as typeof import('node:v8')).setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
}

/** A backreference (\1, \k<name>) or a lookaround ((?=, (?!, (?<=, (?<!): what only the backtracking engine runs. */
const BACKTRACKING_ONLY = /(?<!\\)(?:\\\\)*(?:\\[1-9]|\\k<|\((?:\?<?[=!]))/;

/** Why the linear-time engine cannot take over `pattern`, or undefined when it can. */
function backtrackingOnly(pattern: string): string | undefined {
  const found = BACKTRACKING_ONLY.exec(pattern);
  if (!found) return undefined;
  return found[0].endsWith('<') || /\\[1-9]$/.test(found[0]) ? 'a backreference' : 'a lookaround';
}

/** `\p{…}`, `\P{…}`, `\u{…}` or a character outside the BMP: what means something else, or nothing, without the u flag. */
const NEEDS_UNICODE = /\\[pP]\{|\\u\{|[\u{10000}-\u{10FFFF}]/u;

/** Why `pattern` runs only in the backtracking engine (a backreference, a lookaround, the u flag), or undefined. */
export function unprotectedPattern(pattern: string): string | undefined {
  return backtrackingOnly(pattern) ?? (NEEDS_UNICODE.test(pattern) ? 'a Unicode property or code point escape' : undefined);
}

/**
 * ajv's RegExp engine for `pattern` and `patternProperties`: without the u
 * flag where the pattern does not need it, so the linear-time fallback can
 * take a runaway match over (as ajv before version 7 compiled every pattern).
 */
export const schemaRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    guardRegExpBacktracking();
    return new RegExp(pattern, NEEDS_UNICODE.test(pattern) ? flags : flags.replace('u', ''));
  },
  { code: 'schemaRegExp' },
);
