/**
 * The matcher of an approval rule's pattern (`read` in tag:read, `file_*` in
 * name:file_*), with picomatch's answer for every value. A pattern of plain
 * ASCII letters, digits, `_`, `-` and `.` is compared as text, without
 * picomatch: it lives in the lazily loaded vendor file, and every start
 * checks the default rule tag:read against the bundle's tools.
 *
 * Why the comparison is picomatch's answer: such a pattern compiles to
 * /^(?:^(?:read)$)$/ (with `i` for nocase, never `u`), which matches the
 * whole value, character for character. Without the `u` flag a case-blind
 * RegExp folds a character only to its upper case, and never folds a
 * non-ASCII character onto an ASCII one (the Kelvin sign is not `k`, the
 * long s is not `s`), so an ASCII pattern matches only values that are the
 * same ASCII text up to the case of A-Z. Anything else, a glob or any other
 * character, goes to picomatch.
 */
import { picomatch } from '../vendor/libs.ts';

const PLAIN = /^[A-Za-z0-9_.-]+$/;
const HAS_UPPER = /[A-Z]/;

export function patternMatcher(pattern: string, nocase: boolean): (value: string) => boolean {
  if (PLAIN.test(pattern)) {
    if (!nocase) return (value) => value === pattern;
    const folded = foldAsciiCase(pattern);
    return (value) => value.length === pattern.length && foldAsciiCase(value) === folded;
  }
  // Compiled at the first match, not when the rule is read.
  let compiled: ((value: string) => boolean) | undefined;
  return (value) => (compiled ??= picomatch(pattern, { dot: true, nocase }))(value);
}

/** A-Z to a-z and nothing else: String.toLowerCase would fold the Kelvin sign to k, which the RegExp does not. */
function foldAsciiCase(text: string): string {
  // Tags and names are mostly lower case already: a test is cheaper than a replace that finds nothing (every call checks its rules).
  return HAS_UPPER.test(text) ? text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32)) : text;
}
