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
  const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: process.env });
  const wall = performance.now() - started;
  const outcome = run.status === 0 ? 'green' : 'FAILED';
  return [{ measure: `test suite (${outcome})`, result: `${(wall / 1000).toFixed(0)} s`, ratio: wall / SUITE_BUDGET_MS, against: 'the 2 min budget', goal: 1 }];
}
