/**
 * `node runtime.mjs verify` and the check `serve` / `--stdio` run before
 * they start. FORGE_VERIFY=off skips the start-time check (a warning says so);
 * the verify command always checks.
 */
import { dirname } from 'node:path';
import { formatDiagnostic } from '../diagnostics.ts';
import { verifyBundle } from './verify-bundle.ts';
import { failureJson, jsonDocument } from '../failure-json.ts';
import type { Logger } from '../tools/model.ts';

interface StartOutput {
  log: Pick<Logger, 'warn'>;
  problem(text: string, level?: 'error' | 'warn'): void;
}

const plainOutput: StartOutput = {
  log: { warn: (m) => process.stderr.write(`[forge] warning: ${m}\n`) },
  problem: (text) => process.stderr.write(`${text}\n`),
};

/**
 * Returns an exit code when the process must stop (or verify ran alone), undefined to go on.
 * `out`: where its lines go (the serving log's format); the default writes them as they are.
 * `json`: `verify --json`, whose one document on stdout is all it prints, as doctor's and call's is.
 */
export function verifyAtStart(bundleFile: string, command: string, env: NodeJS.ProcessEnv = process.env, out: StartOutput = plainOutput, json = false): number | undefined {
  const alone = command === 'verify';
  if (!alone && command !== 'serve' && command !== 'stdio') return undefined;
  if (!alone && env.FORGE_VERIFY === 'off') {
    out.log.warn('FORGE_VERIFY=off: the bundle is not checked against checksums.json');
    return undefined;
  }
  const started = performance.now();
  const report = verifyBundle(dirname(bundleFile), { verifyKey: env.FORGE_VERIFY_KEY || undefined });
  if (alone && json) {
    // The failure in the shape every command fails with; a success says what it checked.
    process.stdout.write(jsonDocument(report.ok ? { ok: true, files: report.files, signed: report.signed, warnings: [] } : failureJson(report.diagnostics)));
    return report.ok ? 0 : 1;
  }
  for (const d of report.diagnostics) out.problem(formatDiagnostic(d), d.severity === 'error' ? 'error' : 'warn');
  if (!report.ok) {
    out.problem(`bundle verification failed: refusing to ${alone ? 'call it verified' : 'start'} (node runtime.mjs verify checks it again)`);
    return 1;
  }
  if (alone) {
    const ms = (performance.now() - started).toFixed(1);
    process.stdout.write(`✓ ${report.files} files match checksums.json${report.signed ? ', signature valid (FORGE_VERIFY_KEY)' : ''} (${ms} ms)\n`);
    return 0;
  }
  return undefined;
}
