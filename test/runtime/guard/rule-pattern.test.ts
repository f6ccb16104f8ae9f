/**
 * A plain approval-rule pattern (tag:read) is compared as text instead of
 * compiled by picomatch; the answers must be picomatch's for every value,
 * case-blind ones included (a RegExp without the u flag folds no non-ASCII
 * character onto ASCII, where String.toLowerCase would).
 */
import { describe, expect, it } from 'vitest';
import { patternMatcher } from '../../../runtime/guard/rule-pattern.ts';
import { picomatch } from '../../../runtime/vendor/libs.ts';

const PATTERNS = ['read', 'READ', 'Read', 'file_read', 'ts_tool_9', 'my-tool', 'a.b', '.', '..', '.hidden', '-x', 'k', 's', 'i', 'I', 'ss', 'custom', 'net*', 'file_?', 'a+b', 'é'];

/** Values beside `pattern` that a careless comparison gets wrong: case, Unicode look-alikes and folds, dots, slashes, a line end. */
function awkwardValues(pattern: string): string[] {
  return [
    pattern,
    pattern.toUpperCase(),
    pattern.toLowerCase(),
    pattern.replace(/k/gi, '\u212A'), // Kelvin sign: lower-cases to k
    pattern.replace(/s/gi, '\u017F'), // long s: upper-cases to S
    pattern.replace(/i/g, '\u0131'), // dotless i: upper-cases to I
    pattern.replace(/I/g, '\u0130'), // I with a dot: lower-cases to i and a combining dot
    pattern.replace(/s/gi, 'ß'),
    pattern.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)), // full-width letters
    pattern.replace(/\./g, 'x'),
    `./${pattern}`,
    `${pattern}/`,
    `${pattern}\n`,
    ` ${pattern}`,
    `${pattern}${pattern}`,
    pattern.slice(1),
    'a/b',
    'a\\.b',
    '',
  ];
}

describe('an approval rule pattern', () => {
  for (const nocase of [true, false]) {
    it(`matches every value as picomatch does (${nocase ? 'tag: and category:, case-blind' : 'name:, case-exact'})`, () => {
      const differ: string[] = [];
      for (const pattern of PATTERNS) {
        const reference = picomatch(pattern, { dot: true, nocase });
        const matcher = patternMatcher(pattern, nocase);
        for (const value of awkwardValues(pattern)) {
          if (matcher(value) !== reference(value)) differ.push(`${JSON.stringify(pattern)} vs ${JSON.stringify(value)}: ${matcher(value)}, picomatch ${reference(value)}`);
        }
      }
      expect(differ).toEqual([]);
    });
  }

  it.each([
    ['read', 'READ', true, true],
    ['read', 'READ', false, false],
    ['k', '\u212A', true, false],
    ['s', '\u017F', true, false],
    ['i', '\u0131', true, false],
    ['a.b', 'axb', true, false],
    ['read', './read', true, false],
  ])('%j against %j (nocase %s) is %s', (pattern, value, nocase, expected) => {
    expect(patternMatcher(pattern, nocase)(value)).toBe(expected);
  });
});
