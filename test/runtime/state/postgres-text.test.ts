/**
 * The escaping that lets Postgres hold any JavaScript string (postgres-text.ts),
 * checked without a database: every string comes back as it was, through
 * text and through JSON, no two strings are written alike, and what is
 * written holds none of the characters Postgres refuses. The store's own
 * test (postgres-store.test.ts) writes the same strings to a real server.
 */
import { describe, expect, it } from 'vitest';
import { fromStoredText, parseStoredJson, storedJson, toStoredText } from '../../../runtime/state/postgres-text.ts';

/** Characters that matter here, and their neighbours: random strings of them reach every case. */
const ALPHABET = ['\0', '\u0001', '0', '1', 's', 'd', '8', '\\', 'u', '"', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'a', '\n', '\u0002'];

function randomString(random: () => number, maxLength = 12): string {
  const length = Math.floor(random() * maxLength);
  return Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join('');
}

function seeded(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

/** What Postgres refuses in text: NUL, and a surrogate without its other half. */
const REFUSED = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  return [];
}

describe('text as Postgres can hold it', () => {
  it('gives back every string as it was, and writes no two strings alike', () => {
    const random = seeded(7);
    const written = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const text = randomString(random);
      const stored = toStoredText(text);
      expect(REFUSED.test(stored)).toBe(false);
      expect(fromStoredText(stored)).toBe(text);
      const earlier = written.get(stored);
      if (earlier !== undefined) expect(earlier).toBe(text);
      written.set(stored, text);
    }
  });

  it('leaves text without those characters as it is', () => {
    for (const text of ['', 'plain', 'a\\u0000b', 'emoji 😀', 'tab\tline\n']) expect(toStoredText(text)).toBe(text);
  });

  it('gives back JSON documents as they were, keys and values, with the same strings as text would be written', () => {
    const random = seeded(11);
    for (let i = 0; i < 5_000; i++) {
      const [key, value, other] = [randomString(random), randomString(random), randomString(random)];
      const document = { [key]: value, list: [other, { [other]: key }], n: i };
      const json = storedJson(document);
      // Postgres parses this text: no string it holds, key or value, has a character it refuses.
      expect(stringsIn(JSON.parse(json)).filter((s) => REFUSED.test(s))).toEqual([]);
      expect(JSON.parse(json)).toEqual({ [toStoredText(key)]: toStoredText(value), list: [toStoredText(other), { [toStoredText(other)]: toStoredText(key) }], n: i });
      expect(parseStoredJson(json)).toEqual(document);
    }
  });

  it('reads JSON as Postgres writes it back (U+0001 as \\u0001, other characters as themselves)', () => {
    const document = { text: 'a\0b\u0001c\ud800d', [`k\0`]: '\\u0000 stays text' };
    // jsonb's output: U+0001 escaped as \u0001, the rest as characters.
    const fromPostgres = JSON.stringify(JSON.parse(storedJson(document))).replace(/\u0001/g, '\\u0001');
    expect(parseStoredJson(fromPostgres)).toEqual(document);
  });
});
