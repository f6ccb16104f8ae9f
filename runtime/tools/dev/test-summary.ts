/**
 * Reads the pass/fail counts out of a test run's output, for the runners
 * people use most: vitest, jest, pytest, node's test runner (TAP and spec),
 * mocha, cargo test, go test and Python's unittest, and the plain "N passed, N failed" line.
 * The last summary in the output wins (watchers and reruns print several).
 */
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** The runner whose summary was read. */
  format: string;
}

type Counts = Omit<TestCounts, 'format'>;

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function count(text: string, word: RegExp): number {
  const match = new RegExp(`(\\d+)\\s+(?:${word.source})`).exec(text);
  return match ? Number(match[1]) : 0;
}

interface Reader {
  format: string;
  /** Reads the counts from the whole output, or undefined if this runner's summary is not in it. */
  read(output: string): Counts | undefined;
}

const lastLine = (output: string, pattern: RegExp) => output.split('\n').filter((l) => pattern.test(l)).at(-1);

const READERS: Reader[] = [
  {
    format: 'vitest',
    read(output) {
      const line = lastLine(output, /^\s*Tests\s+\d+ (passed|failed|skipped|todo)/);
      return line === undefined ? undefined : { passed: count(line, /passed/), failed: count(line, /failed/), skipped: count(line, /skipped|todo/) };
    },
  },
  {
    format: 'jest',
    read(output) {
      const line = lastLine(output, /^\s*Tests:\s+.*\d+ total/);
      return line === undefined ? undefined : { passed: count(line, /passed/), failed: count(line, /failed/), skipped: count(line, /skipped|todo|pending/) };
    },
  },
  {
    format: 'pytest',
    read(output) {
      const line = lastLine(output, /(=+ .*\b(passed|failed|error|errors|skipped|no tests ran)\b.* in [\d.]+s.*=+|^\d+ (passed|failed).* in [\d.]+s)/);
      return line === undefined ? undefined : { passed: count(line, /passed/), failed: count(line, /failed/) + count(line, /errors?/), skipped: count(line, /skipped|xfailed|deselected/) };
    },
  },
  {
    format: 'node:test',
    read(output) {
      const pass = lastLine(output, /^(#|\u2139) pass \d+/); // ℹ, escaped: the compiled CLI stays ASCII (runtime/code-cache.ts)
      if (!pass) return undefined;
      const value = (word: string) => Number(/\d+/.exec(lastLine(output, new RegExp(`^(#|\\u2139) ${word} \\d+`)) ?? '0')![0]);
      return { passed: value('pass'), failed: value('fail') + value('cancelled'), skipped: value('skipped') + value('todo') };
    },
  },
  {
    format: 'mocha',
    read(output) {
      const passing = lastLine(output, /^\s*\d+ passing/);
      if (!passing) return undefined;
      return { passed: count(passing, /passing/), failed: count(lastLine(output, /^\s*\d+ failing/) ?? '', /failing/), skipped: count(lastLine(output, /^\s*\d+ pending/) ?? '', /pending/) };
    },
  },
  {
    format: 'cargo',
    read(output) {
      const lines = output.split('\n').filter((l) => /^test result: /.test(l));
      if (!lines.length) return undefined;
      return lines.reduce((sum, l) => ({ passed: sum.passed + count(l, /passed/), failed: sum.failed + count(l, /failed/), skipped: sum.skipped + count(l, /ignored/) }), { passed: 0, failed: 0, skipped: 0 });
    },
  },
  {
    format: 'go',
    read(output) {
      const passed = output.split('\n').filter((l) => /^\s*--- PASS:/.test(l)).length;
      const failed = output.split('\n').filter((l) => /^\s*--- FAIL:/.test(l)).length;
      const skipped = output.split('\n').filter((l) => /^\s*--- SKIP:/.test(l)).length;
      if (passed + failed + skipped > 0) return { passed, failed, skipped };
      // Without -v, go test prints one line per package.
      const okPackages = output.split('\n').filter((l) => /^ok\s+\S+/.test(l)).length;
      const failedPackages = output.split('\n').filter((l) => /^FAIL\s+\S+/.test(l)).length;
      return okPackages + failedPackages > 0 ? { passed: okPackages, failed: failedPackages, skipped: 0 } : undefined;
    },
  },
  {
    format: 'unittest',
    read(output) {
      const ran = lastLine(output, /^Ran \d+ tests? in /);
      if (!ran) return undefined;
      const total = Number(/\d+/.exec(ran)![0]);
      const verdict = lastLine(output, /^(OK|FAILED)\b/) ?? '';
      const field = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(verdict)?.[1] ?? 0);
      const failed = field('failures') + field('errors') + field('unexpected successes');
      const skipped = field('skipped') + field('expected failures');
      return { passed: total - failed - skipped, failed, skipped };
    },
  },
  {
    format: 'plain',
    read(output) {
      const line = lastLine(output, /^(\w+:\s*)?\d+ passed, \d+ failed(, \d+ skipped)?\s*$/);
      return line === undefined ? undefined : { passed: count(line, /passed/), failed: count(line, /failed/), skipped: count(line, /skipped/) };
    },
  },
];

export function readTestCounts(rawOutput: string): TestCounts | undefined {
  const output = rawOutput.replace(ANSI, '').replace(/\r/g, '');
  for (const reader of READERS) {
    const counts = reader.read(output);
    if (counts) return { ...counts, format: reader.format };
  }
  return undefined;
}
