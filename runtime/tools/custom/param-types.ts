/**
 * The docstring type language → JSON Schema.
 *
 *   str|string  int|integer  float|number  bool|boolean  any
 *   list|array  list[T]      dict|object   dict[str, T]
 *   enum(a|b|c)              Optional[T]   (T or null, and the parameter is optional:
 *                                          what Python means by it, and what a model sends)
 */
import type { JSONSchema } from '../model.ts';
import { ownValue } from '../../own-value.ts';

export interface TypeParse {
  schema: JSONSchema;
  optional: boolean;
}

export interface TypeProblem {
  message: string;
  hint?: string;
  /** Offset in the type text where the problem is. */
  offset: number;
  /** The unknown word, for did-you-mean. */
  word?: string;
}

const SCALARS: Record<string, JSONSchema> = {
  str: { type: 'string' },
  string: { type: 'string' },
  int: { type: 'integer' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  number: { type: 'number' },
  bool: { type: 'boolean' },
  boolean: { type: 'boolean' },
  any: {},
};
const LISTS = new Set(['list', 'array']);
const DICTS = new Set(['dict', 'object', 'map']);

export const TYPE_NAMES = [...Object.keys(SCALARS), ...LISTS, ...DICTS, 'enum', 'optional'];

class TypeSyntaxError extends Error {
  constructor(readonly problem: TypeProblem) {
    super(problem.message);
  }
}

export function parseType(text: string): TypeParse | TypeProblem {
  const parser = new TypeParser(text);
  try {
    const result = parser.parseTop();
    parser.skipSpace();
    if (!parser.atEnd()) parser.fail(`unexpected "${text.slice(parser.pos)}" after the type`);
    return result;
  } catch (err) {
    if (err instanceof TypeSyntaxError) return err.problem;
    throw err;
  }
}

export function isTypeProblem(value: TypeParse | TypeProblem): value is TypeProblem {
  return 'message' in value;
}

class TypeParser {
  pos = 0;
  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  fail(message: string, extra: Partial<TypeProblem> = {}): never {
    throw new TypeSyntaxError({ message, offset: this.pos, ...extra });
  }

  expect(char: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== char) this.fail(`expected "${char}" in type "${this.text}"`);
    this.pos++;
  }

  word(): { word: string; at: number } {
    this.skipSpace();
    const at = this.pos;
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos));
    if (!m) this.fail(this.atEnd() ? 'missing type' : `expected a type name, found "${this.text.slice(this.pos)}"`);
    this.pos += m[0].length;
    return { word: m[0], at };
  }

  parseTop(): TypeParse {
    const start = this.pos;
    const { word, at } = this.word();
    if (word.toLowerCase() === 'optional') {
      this.expect('[');
      const inner = this.parseType();
      this.expect(']');
      return { schema: orNull(inner), optional: true };
    }
    this.pos = start;
    void at;
    return { schema: this.parseType(), optional: false };
  }

  parseType(): JSONSchema {
    const { word, at } = this.word();
    const key = word.toLowerCase();
    const scalar = ownValue(SCALARS, key);
    if (scalar) return { ...scalar };
    if (LISTS.has(key)) {
      this.skipSpace();
      if (this.text[this.pos] !== '[') return { type: 'array' };
      this.pos++;
      const items = this.parseType();
      this.expect(']');
      return { type: 'array', items };
    }
    if (DICTS.has(key)) {
      this.skipSpace();
      if (this.text[this.pos] !== '[') return { type: 'object' };
      this.pos++;
      const keyType = this.parseType();
      if (keyType.type !== 'string') this.fail('dictionary keys must be str (JSON object keys are strings)');
      this.expect(',');
      const values = this.parseType();
      this.expect(']');
      return { type: 'object', additionalProperties: values };
    }
    if (key === 'enum') return this.parseEnum(at);
    this.pos = at;
    return this.fail(`unknown type "${word}"`, { word });
  }

  parseEnum(at: number): JSONSchema {
    this.expect('(');
    // Problems inside enum(...) point at the word "enum".
    const fail = (message: string): never => {
      this.pos = at;
      return this.fail(message);
    };
    const close = this.text.indexOf(')', this.pos);
    if (close < 0) fail('enum(...) is missing its closing ")"');
    const body = this.text.slice(this.pos, close);
    const values = body
      .split('|')
      .map((v) => v.trim().replace(/^(["'])(.*)\1$/, '$2'))
      .filter((v) => v.length > 0);
    if (values.length === 0) fail('enum() needs at least one value, e.g. enum(a|b|c)');
    if (new Set(values).size !== values.length) fail(`enum(${body}) lists a value twice`);
    this.pos = close + 1;
    if (values.every((v) => /^-?\d+$/.test(v))) return { type: 'integer', enum: values.map(Number) };
    if (values.every((v) => /^-?\d+(\.\d+)?$/.test(v))) return { type: 'number', enum: values.map(Number) };
    return { type: 'string', enum: values };
  }
}

/**
 * Turns a default written in a docstring into a value of the parameter's type.
 * Returns undefined for "no default" (None/null) and an error string when the
 * text does not fit the type.
 */
export function coerceDefault(raw: string, nullable: JSONSchema): { value?: unknown; error?: string } {
  // Optional[T]'s default is a T (None is no default, as below).
  const schema = withoutNull(nullable) ?? nullable;
  const text = raw.trim();
  if (/^(none|null)$/i.test(text)) return {};
  const quoted = /^(["'])(.*)\1$/s.exec(text);
  const type = schema.type;
  const enumValues = schema.enum as unknown[] | undefined;
  let value: unknown;
  switch (type) {
    case 'string':
      value = quoted ? quoted[2] : text;
      break;
    case 'integer':
      if (!/^-?\d+$/.test(text)) return { error: `default "${text}" is not an integer` };
      value = Number(text);
      break;
    case 'number':
      if (text === '' || !Number.isFinite(Number(text))) return { error: `default "${text}" is not a number` };
      value = Number(text);
      break;
    case 'boolean':
      if (/^(true|yes)$/i.test(text)) value = true;
      else if (/^(false|no)$/i.test(text)) value = false;
      else return { error: `default "${text}" is not a boolean (use true or false)` };
      break;
    case 'array':
    case 'object': {
      const parsed = parseLiteral(text);
      const ok = type === 'array' ? Array.isArray(parsed) : parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
      if (!ok) return { error: `default ${text} is not ${type === 'array' ? 'a list like ["a", "b"]' : 'an object like {"k": 1}'}` };
      value = parsed;
      break;
    }
    default: {
      const parsed = parseLiteral(text);
      value = parsed === undefined ? (quoted ? quoted[2] : text) : parsed;
    }
  }
  if (enumValues && !enumValues.includes(value)) {
    return { error: `default ${JSON.stringify(value)} is not one of ${enumValues.map((v) => JSON.stringify(v)).join(', ')}` };
  }
  return { value };
}

/** JSON, or a Python literal of the same shape (single quotes, True/False/None). */
function parseLiteral(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Try the Python spelling: 'a' → "a", True → true.
  }
  const converted = text
    .replace(/'((?:[^'\\]|\\.)*)'/g, (_, s: string) => JSON.stringify(s.replace(/\\'/g, "'")))
    .replace(/\bTrue\b/g, 'true')
    .replace(/\bFalse\b/g, 'false')
    .replace(/\bNone\b/g, 'null');
  try {
    return JSON.parse(converted);
  } catch {
    return undefined;
  }
}

/** `schema`, or null. */
export function orNull(schema: JSONSchema): JSONSchema {
  const nullable = { ...schema };
  if (typeof schema.type === 'string') nullable.type = [schema.type, 'null'];
  if (Array.isArray(schema.enum)) nullable.enum = [...(schema.enum as unknown[]), null];
  // any ({}): null is already one of its values.
  return nullable;
}

/** The schema a nullable one (orNull) was made from, or undefined when it is not one. */
export function withoutNull(schema: JSONSchema): JSONSchema | undefined {
  const typed = Array.isArray(schema.type) && schema.type.length === 2 && schema.type[1] === 'null';
  const listed = Array.isArray(schema.enum) && schema.enum.length > 1 && schema.enum.at(-1) === null;
  if (!typed && !listed) return undefined;
  const plain = { ...schema };
  if (typed) plain.type = (schema.type as string[])[0];
  if (listed) plain.enum = (schema.enum as unknown[]).slice(0, -1);
  return plain;
}
