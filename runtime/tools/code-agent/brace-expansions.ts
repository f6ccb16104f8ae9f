/**
 * How many patterns a glob's braces expand to, counted without expanding
 * them. fast-glob expands `{a,b}` lists and `{1..9}` ranges into one pattern
 * each, synchronously, before it walks anything: `{a,b}` written 22 times
 * (110 characters) is 4 million patterns, and it exhausted the agent's
 * memory. glob_search refuses a pattern past a limit instead.
 *
 * Counted as micromatch's `braces` expands: a group with a top-level comma
 * is a list (its alternatives' counts added, each of them counted in turn),
 * a group `{x..y}` or `{x..y..step}` of numbers or single letters a range,
 * anything else (no comma, an unclosed brace, an escaped one) literal text.
 * Groups one after another multiply. Braces nested more than 64 deep count
 * as past any cap (nothing a search needs; the count would recurse as deep).
 */

const MAX_DEPTH = 64;

/** The number of patterns `pattern` expands to, or `cap + 1` as soon as it is past `cap`. */
export function braceExpansions(pattern: string, cap: number): number {
  return Math.min(countSequence(pattern, cap, 0), cap + 1);
}

function countSequence(text: string, cap: number, depth: number): number {
  if (depth > MAX_DEPTH) return cap + 1;
  let total = 1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] !== '{') continue;
    const close = matchingBrace(text, i);
    if (close < 0) continue;
    const group = countGroup(text.slice(i + 1, close), cap, depth + 1);
    total *= group;
    if (total > cap) return cap + 1;
    i = close;
  }
  return total;
}

function countGroup(inner: string, cap: number, depth: number): number {
  const alternatives = topLevelSplit(inner);
  if (alternatives.length === 1) return rangeSize(inner, cap) ?? countSequence(inner, cap, depth);
  let sum = 0;
  for (const alternative of alternatives) {
    sum += countSequence(alternative, cap, depth);
    if (sum > cap) return cap + 1;
  }
  return sum;
}

/** The index of the brace that closes the one at `open`, or -1. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** `inner` split at the commas outside nested braces. */
function topLevelSplit(inner: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '\\') i++;
    else if (inner[i] === '{') depth++;
    else if (inner[i] === '}') depth--;
    else if (inner[i] === ',' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts;
}

/** The size of a `{x..y}` or `{x..y..step}` range, or undefined when `inner` is not one. */
function rangeSize(inner: string, cap: number): number | undefined {
  const numeric = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(inner);
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(inner);
  const match = numeric ?? letters;
  if (!match) return undefined;
  const [from, to] = numeric ? [Number(match[1]), Number(match[2])] : [match[1].charCodeAt(0), match[2].charCodeAt(0)];
  const step = Math.abs(Number(match[3] ?? 1)) || 1;
  const size = Math.floor(Math.abs(to - from) / step) + 1;
  return Number.isFinite(size) ? Math.min(size, cap + 1) : cap + 1;
}
