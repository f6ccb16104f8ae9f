/**
 * The diff a file tool's result shows (runtime/tools/code-agent/text-edits.ts): git's unified format for an
 * ordinary change, and a line saying the change is too large to show when finding its lines would hold the
 * agent's thread (10,000 scattered one-line hunks of a file_patch held it 32 s).
 */
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../../runtime/tools/code-agent/text-edits.ts';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line${i}`);

describe('unifiedDiff', () => {
  it("shows an ordinary change in git's format", () => {
    const before = lines(20).join('\n');
    const after = before.replace('line7', 'LINE7');
    expect(unifiedDiff('src/a.txt', before, after)).toBe('--- a/src/a.txt\n+++ b/src/a.txt\n@@ -5,7 +5,7 @@\n line4\n line5\n line6\n-line7\n+LINE7\n line8\n line9\n line10\n');
  });

  it('says a change of 10,000 scattered lines in a 40,000-line file is too large to show, at once', () => {
    const before = lines(40_000);
    const after = before.map((line, i) => (i % 4 === 0 ? line.toUpperCase() : line));
    const started = performance.now();
    const diff = unifiedDiff('big.txt', before.join('\n'), after.join('\n'));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(diff).toBe('--- a/big.txt\n+++ b/big.txt\n(too many changes to show as a diff: more than 2000 lines changed, or more than 1 s to find them; 40000 lines before, 40000 after)\n');
  });

  // Small beside either bound (a few milliseconds here), so that a loaded machine never meets the second.
  it('still shows a change of 250 scattered lines', () => {
    const before = lines(2_000);
    const after = before.map((line, i) => (i % 8 === 0 ? line.toUpperCase() : line));
    const diff = unifiedDiff('mid.txt', before.join('\n'), after.join('\n'));
    expect(diff.match(/^\+LINE/gm)).toHaveLength(250);
  });
});
