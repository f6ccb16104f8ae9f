/**
 * A tool's JSON output parsed exactly: numbers a double would change stay as
 * their text, wherever they are, and the quick path (JSON.parse alone, when
 * no number could change) gives the very same values as looking at every token.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonExact, protectNumbers } from '../../../runtime/tools/exact-output.ts';

describe('parseJsonExact', () => {
  it.each([
    ['9007199254740993', '9007199254740993'],
    ['1e999', '1e999'],
    ['-0', '-0'],
    ['-0.000', '-0.000'],
    ['0.10000000000000000001', '0.10000000000000000001'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
  ])('keeps %s as its text', (token, text) => {
    expect(parseJsonExact(`{"n": ${token}, "list": [${token}]}`)).toEqual({ n: text, list: [text] });
  });

  it.each([
    ['0.1', 0.1],
    ['-0.5', -0.5],
    ['1e5', 1e5],
    ['9007199254740991', 9007199254740991],
    ['123456789012345', 123456789012345],
    ['0', 0],
  ])('keeps %s a number when a double holds it', (token, value) => {
    expect(parseJsonExact(`[${token}]`)).toEqual([value]);
  });

  it('leaves digits inside strings alone, escaped quotes included', () => {
    expect(parseJsonExact('{"id": "9007199254740993", "q": "say \\"-0\\" 1e999", "date": "2024-01-05"}')).toEqual({ id: '9007199254740993', q: 'say "-0" 1e999', date: '2024-01-05' });
  });

  it('gives what looking at every token gives, for thousands of generated documents', () => {
    // Numbers of every shape around the limits, in strings and out of them, in nested documents.
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
    const digits = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? 1 + Math.floor(random() * 9) : Math.floor(random() * 10))).join('');
    const number = () =>
      pick([
        () => digits(1 + Math.floor(random() * 20)),
        () => `${digits(1 + Math.floor(random() * 10))}.${digits(1 + Math.floor(random() * 12))}`,
        () => `0.${'0'.repeat(Math.floor(random() * 16))}${digits(1 + Math.floor(random() * 3))}`,
        () => `${digits(1 + Math.floor(random() * 3))}e${pick(['', '+', '-'])}${digits(1 + Math.floor(random() * 3))}`,
        () => pick(['0', '-0', '-0.0', '-0.000', '0.0', '-0.5', '-0e3']),
        () => pick(['9007199254740991', '9007199254740992', '9007199254740993', '999999999999999', '1000000000000000']),
      ])();
    const value = (depth: number): string => {
      const kind = depth > 2 ? pick(['number', 'string']) : pick(['number', 'negative', 'string', 'array', 'object', 'literal']);
      if (kind === 'number') return number();
      if (kind === 'negative') return `-${number().replace(/^-/, '')}`;
      if (kind === 'string') return JSON.stringify(pick(['', 'plain', '2024-01-05', '-0', 'x 1e999 y', `n=${number()}`, 'say "hi"']));
      if (kind === 'literal') return pick(['true', 'false', 'null']);
      const items = Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      if (kind === 'array') return `[${items.join(', ')}]`;
      return `{${items.map((item, i) => `"k${i}": ${item}`).join(', ')}}`;
    };
    let quick = 0;
    for (let i = 0; i < 4000; i++) {
      const text = value(0);
      expect(parseJsonExact(text), text).toEqual(JSON.parse(protectNumbers(text)));
      if (protectNumbers(text) === text) quick++;
    }
    // Both kinds were generated: documents every number of which a double holds, and others.
    expect(quick).toBeGreaterThan(400);
    expect(quick).toBeLessThan(3600);
  });
});
