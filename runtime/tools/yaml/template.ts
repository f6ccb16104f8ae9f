/**
 * Templates in YAML tools: `{PARAM}`, `{step.output}`, `{var.field}`,
 * `{RAW:PARAM}`, and in environment values `${VAR}`. `{{` and `}}` are
 * literal braces. `${...}` is never a placeholder (it is shell syntax),
 * and any other brace is literal text.
 *
 * A template is parsed once, when the tool is loaded, into text and
 * placeholder segments. Values are inserted into that parsed form, so a
 * value that looks like a placeholder is never substituted a second time.
 */
import { ForgeError } from '../../diagnostics.ts';

export interface Reference {
  /** A parameter, a step, an output_var, or `input` (all the arguments). */
  root: string;
  /** Fields after the root: `step.output` → ['output']. */
  path: string[];
  /** As written, without the braces: `step.output`, `RAW:NAME`. */
  text: string;
}

export type Segment =
  | { kind: 'text'; text: string }
  | { kind: 'ref'; ref: Reference; raw: boolean; offset: number; length: number }
  | { kind: 'env'; name: string; offset: number; length: number };

export interface Template {
  source: string;
  segments: Segment[];
}

export interface TemplateProblem {
  message: string;
  offset: number;
  hint?: string;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const FIELD = /^[A-Za-z0-9_-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Text inside braces that makes a placeholder; anything else stays literal. */
function asReference(inner: string): { ref: Reference; raw: boolean } | undefined {
  let raw = false;
  let body = inner;
  if (body.startsWith('RAW:')) {
    raw = true;
    body = body.slice(4);
  }
  const [root, ...path] = body.split('.');
  if (!IDENT.test(root) || !path.every((p) => FIELD.test(p))) return undefined;
  return { ref: { root, path, text: inner }, raw };
}

/**
 * Parses a template. `env: true` reads `${VAR}` as an environment variable
 * (environment values, working-directory); elsewhere `${...}` is literal.
 */
export function parseTemplate(source: string, options: { env?: boolean } = {}): { template: Template; problems: TemplateProblem[] } {
  const segments: Segment[] = [];
  const problems: TemplateProblem[] = [];
  let text = '';
  const flush = () => {
    if (text) segments.push({ kind: 'text', text });
    text = '';
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '$' && source[i + 1] === '{' && source[i + 2] !== '{') {
      const close = source.indexOf('}', i + 2);
      if (options.env) {
        const name = close < 0 ? '' : source.slice(i + 2, close);
        if (!ENV_NAME.test(name)) {
          problems.push({ message: `"${source.slice(i, close < 0 ? undefined : close + 1)}" is not an environment variable reference`, offset: i, hint: 'write ${NAME} with letters, digits and "_", or ${{ for a literal "${"' });
          text += '${';
          i += 2;
          continue;
        }
        flush();
        segments.push({ kind: 'env', name, offset: i, length: close + 1 - i });
        i = close + 1;
        continue;
      }
      // Shell parameter expansion: "${" is literal (a placeholder inside it is
      // still found, so the script check can refuse it).
      text += '${';
      i += 2;
      continue;
    }
    if (c === '{' && source[i + 1] === '{') {
      text += '{';
      i += 2;
      continue;
    }
    if (c === '}' && source[i + 1] === '}') {
      text += '}';
      i += 2;
      continue;
    }
    if (c === '{') {
      const close = source.indexOf('}', i + 1);
      const found = close < 0 ? undefined : asReference(source.slice(i + 1, close));
      if (found) {
        flush();
        segments.push({ kind: 'ref', ref: found.ref, raw: found.raw, offset: i, length: close + 1 - i });
        i = close + 1;
        continue;
      }
    }
    text += c;
    i++;
  }
  flush();
  return { template: { source, segments }, problems };
}

export function references(template: Template): Extract<Segment, { kind: 'ref' }>[] {
  return template.segments.filter((s): s is Extract<Segment, { kind: 'ref' }> => s.kind === 'ref');
}

/** The template is one placeholder and nothing else: its value keeps its type (an object stays an object). */
function singleReference(template: Template): Reference | undefined {
  const [only, ...rest] = template.segments;
  return only?.kind === 'ref' && rest.length === 0 ? only.ref : undefined;
}

/** A value as text: strings as they are, numbers and booleans as written, objects and arrays as JSON. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export type Resolve = (ref: Reference) => unknown;

/** Renders a template as plain text (no escaping: environment values, arguments, output). */
export function renderText(template: Template, resolve: Resolve, env: Record<string, string> = {}): string {
  let out = '';
  for (const s of template.segments) {
    if (s.kind === 'text') out += s.text;
    else if (s.kind === 'env') out += env[s.name] ?? '';
    else out += textOf(resolve(s.ref));
  }
  return out;
}

/** Renders with types: a lone placeholder gives its value as is, anything else gives text. */
export function renderValue(template: Template, resolve: Resolve, env: Record<string, string> = {}): unknown {
  const only = singleReference(template);
  if (only) return resolve(only) ?? null;
  return renderText(template, resolve, env);
}

/** An `output:` whose first text starts with `{` or `[` may be JSON (jsonPlaces decides; renderOutput's null rule uses this alone). */
const STARTS_LIKE_JSON = /^\s*[[{]/;

/** Where a placeholder stands in an `output:` written as JSON: inside a JSON string, or as a value of its own. */
export type JsonPlace = 'string' | 'value';

/**
 * Whether an `output:` is written as JSON, and where each of its placeholders
 * stands in it (in order), read once when the tool loads. It is JSON when it
 * starts with `{` or `[` and is JSON apart from its placeholders: with each
 * one outside a string read as `null` and each one inside a string as
 * nothing, the text parses — as one document, or as objects and arrays one
 * after another (JSON Lines, or documents in a row), each parsing. `[{level}] {message}` starts like JSON but is
 * not, so it stays plain text and its values go in as they are.
 *
 * Inside or outside a string is found by scanning the literal text, honouring
 * backslash escapes. A placeholder right after a backslash inside a string
 * (`"a\{x}"`) has no single meaning (the value's first character would be
 * escaped), so such a template is not treated as JSON.
 */
export function jsonPlaces(template: Template): JsonPlace[] | undefined {
  const [first] = template.segments;
  if (first?.kind !== 'text' || !STARTS_LIKE_JSON.test(first.text)) return undefined;
  const places: JsonPlace[] = [];
  // The probe, cut after each object or array that closes at the top: JSON Lines (one document a line)
  // and documents in a row are read as JSON too, each parsed on its own — one a consumer reads line by
  // line is as much JSON as one it reads whole, and its values must not add a record either.
  const documents: string[] = [];
  let probe = '';
  let inString = false;
  let escaped = false;
  let depth = 0;
  for (const s of template.segments) {
    if (s.kind === 'env') return undefined;
    if (s.kind === 'ref') {
      if (escaped) return undefined;
      places.push(inString ? 'string' : 'value');
      // Spaces keep `null` a token of its own, so the probe parses only where any JSON value could stand.
      probe += inString ? '' : ' null ';
      continue;
    }
    for (const c of s.text) {
      probe += c;
      if (escaped) escaped = false;
      else if (inString && c === '\\') escaped = true;
      else if (c === '"') inString = !inString;
      else if (!inString && (c === '{' || c === '[')) depth++;
      else if (!inString && (c === '}' || c === ']') && --depth === 0) {
        documents.push(probe);
        probe = '';
      }
    }
  }
  if (probe.trim()) documents.push(probe);
  // Each document an object or an array: `[{level}] {message}` is text that starts like JSON, not two documents.
  for (const document of documents) {
    if (!STARTS_LIKE_JSON.test(document)) return undefined;
    try {
      JSON.parse(document);
    } catch {
      return undefined;
    }
  }
  return places;
}

/**
 * A tool's `output:`. With `places` (it is JSON, see jsonPlaces) each value
 * is made to fit where it stands, so no value can change the JSON around it:
 * inside a string it is escaped as string content (quotes, backslashes,
 * newlines, control characters); as a value it must be one JSON value (a
 * number, true, an object... inserted as written; nothing is `null`), or the
 * call fails (FORGE_YAML_VALUE) rather than return broken or rewritten JSON.
 * `{RAW:...}` is inserted as it is.
 *
 * Otherwise renderValue, except that in an output that starts with `{` or `[`
 * a placeholder standing as a value (after `:`, `[` or `,`, before `,`, `}`
 * or `]`) whose value is nothing (a skipped step's output, a JSON null)
 * renders as `null`, so that `{"quote": {quote.output}}` stays JSON when the
 * quote step was skipped.
 */
export function renderOutput(template: Template, resolve: Resolve, places?: readonly JsonPlace[]): unknown {
  if (singleReference(template)) return renderValue(template, resolve);
  if (places) return renderJson(template, resolve, places);
  const [first] = template.segments;
  const json = first?.kind === 'text' && STARTS_LIKE_JSON.test(first.text);
  let out = '';
  template.segments.forEach((s, n) => {
    if (s.kind === 'text') out += s.text;
    else if (s.kind === 'ref') {
      const value = resolve(s.ref);
      const after = template.segments[n + 1];
      const jsonValue = json && /[:[,]\s*$/.test(out) && after?.kind === 'text' && /^\s*[,}\]]/.test(after.text);
      out += (value === null || value === undefined) && jsonValue ? 'null' : textOf(value);
    }
  });
  return out;
}

function renderJson(template: Template, resolve: Resolve, places: readonly JsonPlace[]): string {
  let out = '';
  let n = 0;
  for (const s of template.segments) {
    if (s.kind === 'text') out += s.text;
    else if (s.kind === 'ref') {
      const value = resolve(s.ref);
      const place = places[n++];
      // {RAW:...} goes in as it is, as everywhere else (the build warns about each use).
      if (s.raw) out += (value === null || value === undefined) && place === 'value' ? 'null' : textOf(value);
      else out += place === 'string' ? JSON.stringify(textOf(value)).slice(1, -1) : jsonValueText(s.ref, value);
    }
  }
  return out;
}

/** A value standing as a JSON value: its text as today (numbers as written, objects as JSON), if that is one JSON value. */
function jsonValueText(ref: Reference, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  const text = textOf(value);
  try {
    JSON.parse(text);
    return text;
  } catch {
    const shown = text.length > 60 ? `${text.slice(0, 60)}...` : text;
    // The code escape.ts's ValueRefused has (not imported from there: escape.ts imports this file).
    throw new ForgeError(
      'FORGE_YAML_VALUE',
      `output: {${ref.text}} stands as a JSON value, but its value ${JSON.stringify(shown)} is not one`,
      `write "{${ref.text}}" (in quotes) in output: to insert it as a JSON string`,
    );
  }
}

/** The literal text with every placeholder removed, and where each one stood in it (for the script lexers). */
export function literalSkeleton(template: Template): { text: string; positions: number[] } {
  let text = '';
  const positions: number[] = [];
  for (const s of template.segments) {
    if (s.kind === 'text') text += s.text;
    else positions.push(text.length);
  }
  return { text, positions };
}
