/**
 * What a tool's output becomes as its result, changed as little as possible:
 *
 * - text is the exact output minus one trailing newline (the one print()
 *   or echo adds): spaces, tabs, a BOM, carriage returns and any further
 *   newlines are kept;
 * - JSON is parsed only where the tool declares a JSON output, and then
 *   without losing anything: a number a double cannot hold exactly (an
 *   integer past 2^53, 1e999, more digits than a double keeps, -0) stays as
 *   its text instead of being rounded or turned into null.
 *
 * JSON.parse in Node 20 cannot show a reviver the number's source text, so
 * before parsing, every number token outside a string that a double would
 * change is turned into a JSON string of its own text.
 */

export function outputText(stdout: string): string {
  return stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout;
}

/** A JSON number's value, or its text where a double would change it. */
export function exactNumber(text: string): number | string {
  const value = Number(text);
  if (!Number.isFinite(value) || Object.is(value, -0)) return text;
  if (/^-?\d+$/.test(text)) return Number.isSafeInteger(value) ? value : text;
  // A decimal keeps its value when the double's shortest form has the same significant digits (0.1 does; 0.10000000000000000001 does not).
  const digits = significantDigits(text);
  return digits.length <= 15 || significantDigits(String(value)) === digits ? value : text;
}

function significantDigits(number: string): string {
  return number.replace(/^-/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
}

/**
 * Text in which no number a double would change can be: every number token
 * has fewer than 16 digits, no exponent, and is not -0. (A match may be in a
 * string, or harmless: then the tokens are looked at one by one.)
 */
const MAY_CHANGE_A_NUMBER = /\d[\d.]{15}|\d[eE]|-0(?:\.0*)?(?![\d.eE])/;

/** Parses JSON exactly (see above); throws SyntaxError for text that is not JSON. */
export function parseJsonExact(text: string): unknown {
  // Most results hold only short numbers: JSON.parse alone gives the same value, without a callback per token.
  return JSON.parse(MAY_CHANGE_A_NUMBER.test(text) ? protectNumbers(text) : text);
}

/** The text with every number a double would change turned into a JSON string of its own text. */
export function protectNumbers(text: string): string {
  // Strings are matched first, so digits inside them are left alone.
  return text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) => {
    if (token.startsWith('"')) return token;
    const value = exactNumber(token);
    return typeof value === 'string' ? JSON.stringify(value) : token;
  });
}

/** Whether a tool's output schema says its result is structured (an object, array, number, boolean or null) rather than text. */
export function declaresJson(schema: { type?: unknown } | undefined): boolean {
  if (!schema) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return !types.every((t) => t === 'string');
}
