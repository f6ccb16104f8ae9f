/**
 * Text PostgreSQL cannot hold, held anyway. Its `text` type refuses the NUL
 * character, `jsonb` refuses "\u0000" as well, and neither takes half of a
 * UTF-16 surrogate pair, which a JavaScript string may hold (JSON.parse
 * makes one of "\ud800"). A client's message, a command's output or a
 * model's answer can carry any of them, and a replica's store must keep what
 * the memory store keeps: a statement Postgres refuses would fail the turn
 * after its work was done.
 *
 * So every string the store writes has those characters escaped with U+0001,
 * which is itself escaped, and every string it reads is unescaped:
 *
 *   U+0000 → U+0001 "0"    U+0001 → U+0001 "1"    lone U+D800–DFFF → U+0001 "s" + its four hex digits
 *
 * Parameters are escaped where every statement passes (a pg Client whose
 * query escapes its string values) and read back through the pool's type
 * parsers for text and JSON, so no statement can forget either half. JSON
 * documents are written with `storedJson`, which escapes the same characters
 * inside the JSON text (where JSON.stringify wrote them as \u escapes).
 */
import type { ClientConfig, CustomTypesConfig, PoolConfig, QueryConfig } from 'pg';
import pg from './pg-client.ts';
import { LONE_SURROGATE } from '../lone-surrogate.ts';

const ESCAPED_CHARACTER = new RegExp(`[\\0\\u0001]|${LONE_SURROGATE.source}`, 'g');
const ESCAPE = /\u0001(?:([01])|s([0-9a-f]{4}))/g;
/** In JSON text: an escaped backslash (skipped, so that `\\u0000` stays text) or a \u escape of a character above. */
const ESCAPED_IN_JSON = /\\(?:\\|u(000[01]|d[89a-f][0-9a-f]{2}))/g;
/** In JSON text Postgres wrote (it writes U+0001 as \u0001): an escaped backslash or an escape of ours. */
const ESCAPE_IN_JSON = /\\(?:\\|u0001(?:([01])|s([0-9a-f]{4})))/g;

/** `text` as Postgres can hold it. */
export function toStoredText(text: string): string {
  return text.replace(ESCAPED_CHARACTER, (c) => (c === '\0' ? '\u00010' : c === '\u0001' ? '\u00011' : `\u0001s${c.charCodeAt(0).toString(16)}`));
}

/** The text `toStoredText` was given. */
export function fromStoredText(stored: string): string {
  if (!stored.includes('\u0001')) return stored;
  return stored.replace(ESCAPE, (_, digit: string | undefined, hex: string | undefined) => (hex ? String.fromCharCode(parseInt(hex, 16)) : digit === '0' ? '\0' : '\u0001'));
}

/** `value` as JSON text for a json or jsonb parameter, every string in it (keys too) as `toStoredText` writes it. */
export function storedJson(value: unknown): string {
  const text = JSON.stringify(value);
  // JSON.stringify writes each of these characters as a \u escape, never as itself.
  if (!text.includes('\\u000') && !text.includes('\\ud')) return text;
  return text.replace(ESCAPED_IN_JSON, (match, code: string | undefined) => {
    if (!code) return match;
    return code === '0000' ? '\\u00010' : code === '0001' ? '\\u00011' : `\\u0001s${code}`;
  });
}

/** A json or jsonb value Postgres sent, as it was before `storedJson`. */
export function parseStoredJson(text: string): unknown {
  if (!text.includes('\\u0001')) return JSON.parse(text);
  return JSON.parse(
    text.replace(ESCAPE_IN_JSON, (match, digit: string | undefined, hex: string | undefined) => (hex ? `\\u${hex}` : digit === '0' ? '\\u0000' : digit === '1' ? '\\u0001' : match)),
  );
}

function storedParameter(value: unknown): unknown {
  return typeof value === 'string' ? toStoredText(value) : value;
}

/** A pg Client whose statements' string parameters are written as `toStoredText` writes them. */
class StoredTextClient extends pg.Client {
  // pg's overloads, all through one: (text or config, values?, callback?), or a submittable (left alone).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config?.submit !== 'function') {
      if (Array.isArray(values)) values = values.map(storedParameter);
      else if (config && typeof config === 'object' && Array.isArray((config as QueryConfig).values)) config = { ...config, values: (config as QueryConfig).values!.map(storedParameter) };
    }
    return super.query(config, values, callback);
  }
}

const TEXT_TYPES = new Set([pg.types.builtins.TEXT, pg.types.builtins.VARCHAR, pg.types.builtins.BPCHAR]);
const JSON_TYPES = new Set([pg.types.builtins.JSON, pg.types.builtins.JSONB]);

const storedTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format !== 'binary' && TEXT_TYPES.has(oid)) return fromStoredText;
    if (format !== 'binary' && JSON_TYPES.has(oid)) return parseStoredJson;
    return pg.types.getTypeParser(oid, format);
  }) as CustomTypesConfig['getTypeParser'],
};

/** What a pool's config needs for its clients to write and read text this way. */
export const STORED_TEXT_CONFIG: Pick<PoolConfig, 'Client'> & Pick<ClientConfig, 'types'> = { Client: StoredTextClient, types: storedTypes };
