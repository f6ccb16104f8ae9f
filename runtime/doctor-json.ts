/**
 * `doctor --json` (forge's and the bundle's): the report as it always was (`ok`, `checks`), with its
 * `warnings` as every command's document has them, and when a check fails, the keys every failed
 * command has (runtime/failure-json.ts), so a CI job reads a doctor that fails as it reads a build
 * that fails. A failing check is an error, a warning check a warning, each with the code the agent
 * would report (FORGE_DOCTOR_CHECK when it has none of its own).
 */
import { error, warning, type Diagnostic } from './diagnostics.ts';
import type { DoctorCheck, DoctorReport } from './doctor.ts';
import { diagnosticsJson, failureJson } from './failure-json.ts';

/** `warnings`: what the command warned of before the checks (forge doctor: forge.yaml's, as text mode prints them). */
export function doctorJson(report: DoctorReport, warnings: readonly Diagnostic[] = []): object {
  const diagnostics = [...warnings.filter((d) => d.severity === 'warning'), ...report.checks.flatMap(checkDiagnostic)];
  // A doctor that passes with a warn line (a model key not set, for forge doctor) says it where a script looks for it.
  if (report.ok) return { ...report, warnings: diagnosticsJson(diagnostics).warnings };
  return failureJson(diagnostics, { checks: report.checks });
}

function checkDiagnostic(check: DoctorCheck): Diagnostic[] {
  const make = !check.ok ? error : check.warning ? warning : undefined;
  if (!make) return [];
  const at = check.file ? { file: check.file, line: check.line, column: check.column } : {};
  return [make(check.code ?? 'FORGE_DOCTOR_CHECK', `${check.name}: ${check.detail}`, at, check.hint)];
}
