/**
 * `node runtime.mjs verify` and the check `serve` / `--stdio` run before
 * they start. FORGE_VERIFY=off skips the start-time check (a warning says so);
 * the verify command always checks.
 */
import { dirname } from 'node:path';
import { formatDiagnostic } from '../diagnostics.ts';
import { verifyBundle } from './verify-bundle.ts';

/** Returns an exit code when the process must stop (or verify ran alone), undefined to go on. */
export function verifyAtStart(bundleFile: string, command: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const alone = command === 'verify';
  if (!alone && command !== 'serve' && command !== 'stdio') return undefined;
  if (!alone && env.FORGE_VERIFY === 'off') {
    process.stderr.write('[forge] warning: FORGE_VERIFY=off: the bundle is not checked against checksums.json\n');
    return undefined;
  }
  const started = performance.now();
  const report = verifyBundle(dirname(bundleFile), { verifyKey: env.FORGE_VERIFY_KEY || undefined });
  for (const d of report.diagnostics) process.stderr.write(formatDiagnostic(d) + '\n');
  if (!report.ok) {
    process.stderr.write(`bundle verification failed: refusing to ${alone ? 'call it verified' : 'start'} (node runtime.mjs verify checks it again)\n`);
    return 1;
  }
  if (alone) {
    const ms = (performance.now() - started).toFixed(1);
    process.stdout.write(`✓ ${report.files} files match checksums.json${report.signed ? ', signature valid (FORGE_VERIFY_KEY)' : ''} (${ms} ms)\n`);
    return 0;
  }
  return undefined;
}
