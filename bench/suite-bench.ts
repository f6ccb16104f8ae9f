/**
 * The whole test suite's wall time, against the two minutes it must fit in
 * on a 2-core machine: the last row of `npm run bench`, so that one run
 * prints every figure. `npm run bench -- --no-suite` leaves it out (it is
 * the longest row by far).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './measure.ts';

const SUITE_BUDGET_MS = 120_000;

export async function suiteRow(): Promise<BenchRow[]> {
  if (process.argv.includes('--no-suite')) return [{ measure: 'test suite', result: 'not run', against: 'left out with --no-suite' }];
  const root = fileURLToPath(new URL('..', import.meta.url));
  const started = performance.now();
  const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--reporter=dot'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env, maxBuffer: 64 * 1024 * 1024 });
  const wall = performance.now() - started;
  const outcome = run.status === 0 ? 'green' : 'FAILED';
  // A red suite says which tests failed (vitest's own summary), not just that it did.
  if (run.status !== 0) process.stderr.write(`${`${run.stdout}\n${run.stderr}`.split('\n').filter((line) => /FAIL|×|✗|Error|expected/i.test(line)).slice(0, 40).join('\n')}\n`);
  return [{ measure: `test suite (${outcome})`, result: `${(wall / 1000).toFixed(0)} s`, ratio: wall / SUITE_BUDGET_MS, against: 'the 2 min budget', goal: 1, failed: run.status !== 0 }];
}
