/**
 * What the start-time bundle check costs: verifyBundle() over the built
 * bundle (every file hashed), against starting node itself.
 */
import { verifyBundle } from '../runtime/verify/verify-bundle.ts';
import { median, type BenchRow } from './measure.ts';

export function benchVerify(bundleDir: string, nodeStartMs: number, runs: number): BenchRow {
  const times: number[] = [];
  let files = 0;
  for (let i = 0; i < runs * 3; i++) {
    const started = performance.now();
    const report = verifyBundle(bundleDir);
    times.push(performance.now() - started);
    if (!report.ok) throw new Error(report.diagnostics.map((d) => d.message).join('\n'));
    files = report.files;
  }
  const t = median(times);
  return { measure: `bundle check at start (verify, ${files} files hashed)`, result: `${t.toFixed(1)} ms`, ratio: t / nodeStartMs, against: `node -e 0 ${nodeStartMs.toFixed(0)} ms` };
}
