import { describe, expect, it } from 'vitest';
import { readTestCounts } from '../../../../runtime/tools/dev/test-summary.ts';

describe('readTestCounts', () => {
  it.each([
    ['vitest', ' Test Files  1 failed | 3 passed (4)\n      Tests  2 failed | 40 passed | 1 skipped (43)\n   Duration  1.2s', { passed: 40, failed: 2, skipped: 1 }],
    ['vitest (colours)', '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m12 passed\u001b[39m\u001b[22m\u001b[90m (12)\u001b[39m', { passed: 12, failed: 0, skipped: 0 }],
    ['jest', 'Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 skipped, 10 passed, 13 total\nTime: 1s', { passed: 10, failed: 1, skipped: 2 }],
    ['pytest', 'tests/test_x.py ..F\n=========== 1 failed, 2 passed, 1 skipped in 0.12s ===========', { passed: 2, failed: 1, skipped: 1 }],
    ['pytest', '==== 3 passed, 1 error in 0.30s ====', { passed: 3, failed: 1, skipped: 0 }],
    ['pytest', '5 passed in 0.01s', { passed: 5, failed: 0, skipped: 0 }],
    ['node:test', 'TAP version 13\nok 1 - a\n# tests 3\n# suites 0\n# pass 2\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0', { passed: 2, failed: 1, skipped: 0 }],
    ['node:test', 'ℹ tests 4\nℹ pass 4\nℹ fail 0\nℹ cancelled 0\nℹ skipped 1\nℹ todo 0', { passed: 4, failed: 0, skipped: 1 }],
    ['mocha', '  7 passing (20ms)\n  2 pending\n  1 failing\n', { passed: 7, failed: 1, skipped: 2 }],
    ['cargo', 'test result: ok. 3 passed; 0 failed; 1 ignored\ntest result: FAILED. 1 passed; 2 failed; 0 ignored', { passed: 4, failed: 2, skipped: 1 }],
    ['go', '=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL', { passed: 1, failed: 1, skipped: 0 }],
    ['go', 'ok  \texample.com/a\t0.01s\nFAIL\texample.com/b\t0.02s', { passed: 1, failed: 1, skipped: 0 }],
    ['unittest', '..F.s\n======\nFAIL: test_x\n------\nRan 5 tests in 0.001s\n\nFAILED (failures=1, skipped=1)', { passed: 3, failed: 1, skipped: 1 }],
    ['unittest', 'Ran 2 tests in 0.000s\n\nOK', { passed: 2, failed: 0, skipped: 0 }],
    ['plain', 'checking...\nsummary: 8 passed, 1 failed, 2 skipped', { passed: 8, failed: 1, skipped: 2 }],
  ])('reads a %s summary', (format, output, counts) => {
    expect(readTestCounts(output)).toEqual({ ...counts, format: format.replace(/ \(.*\)$/, '') });
  });

  it('uses the last summary when there are several', () => {
    expect(readTestCounts('      Tests  1 failed (1)\n...rerun...\n      Tests  1 passed (1)')).toMatchObject({ passed: 1, failed: 0 });
  });

  it('returns undefined for output without a summary it knows', () => {
    expect(readTestCounts('everything is fine\n')).toBeUndefined();
  });
});
