import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError } from '../../runtime/json-syntax.ts';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('findJsonSyntaxError', () => {
  it('finds nothing wrong in any JSON that JSON.stringify writes', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4 }), (value, indent) => {
      expect(findJsonSyntaxError(JSON.stringify(value, null, indent))).toBeUndefined();
    }), { numRuns: 500 });
  });

  it('agrees with JSON.parse on arbitrary near-JSON text', () => {
    const piece = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '"a"', '1', '-', '0', '.5', 'e3', 'true', 'nul', 'null', ' ', '\n', '\\', '\\u00e9', "'", '/');
    fc.assert(fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
      const text = pieces.join('');
      expect(findJsonSyntaxError(text) === undefined, JSON.stringify(text)).toBe(parses(text));
    }), { numRuns: 3000 });
  });

  it('agrees with JSON.parse after one character of valid JSON is changed', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.nat(), fc.constantFrom('}', ']', ',', ':', '"', 'x', ' ', '0'), (value, position, replacement) => {
      const valid = JSON.stringify(value);
      const at = position % Math.max(valid.length, 1);
      const text = valid.slice(0, at) + replacement + valid.slice(at + 1);
      expect(findJsonSyntaxError(text) === undefined, JSON.stringify(text)).toBe(parses(text));
    }), { numRuns: 1000 });
  });
});
