import { afterEach, describe, expect, it, vi } from 'vitest';
import { printRows } from '../../bench/measure.ts';

describe('printRows', () => {
  afterEach(() => vi.restoreAllMocks());

  const printed = (rows: Parameters<typeof printRows>[0]) => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    return { allMet: printRows(rows), lines };
  };

  it('says met for a figure at or under its goal, and MISSED over it', () => {
    const { allMet, lines } = printed([
      { measure: 'fast', result: '1 ms', ratio: 0.5, goal: 1 },
      { measure: 'slow', result: '3 ms', ratio: 3, goal: 1 },
    ]);
    expect(allMet).toBe(false);
    expect(lines.find((l) => l.startsWith('fast'))).toMatch(/met$/);
    expect(lines.find((l) => l.startsWith('slow'))).toMatch(/MISSED$/);
  });

  it('never says met for a failed run, however fast (a red suite is not a suite within budget)', () => {
    const { allMet, lines } = printed([{ measure: 'test suite (FAILED)', result: '68 s', ratio: 0.56, goal: 1, failed: true }]);
    expect(allMet).toBe(false);
    expect(lines.at(-1)).toMatch(/MISSED$/);
  });
});
