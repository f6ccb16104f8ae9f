/**
 * The one JSON shape of a failed command (`--json`), for the forge CLI and
 * the bundle's `node runtime.mjs` alike, so that a script reads every
 * command's failure the same way:
 *
 *   { ok: false, error, errors: [...], warnings: [...], ...what the command adds }
 *
 * `error` is the first of `errors`: a script that wants one reason reads
 * `error.code`, as it reads a tool call's `{ ok: false, error }`. Each entry
 * is a diagnostic — severity, code, message, hint, and where (flat file/line/
 * column, and esbuild's `location` with the line's text) — and its notes.
 */
import { error as errorDiagnostic, type Diagnostic, type DiagnosticCode, type DiagnosticNote, type Location } from './diagnostics.ts';
import type { ToolError } from './tools/model.ts';

/** Where a diagnostic points, as esbuild's Message.location: present only when a file is known. */
export interface LocationJson {
  file: string;
  line?: number;
  column?: number;
  lineText?: string;
}

export interface NoteJson {
  text: string;
  file?: string;
  line?: number;
  column?: number;
  location?: LocationJson;
}

export interface DiagnosticJson {
  severity: Diagnostic['severity'];
  code: DiagnosticCode;
  message: string;
  hint?: string;
  file?: string;
  line?: number;
  column?: number;
  location?: LocationJson;
  notes?: NoteJson[];
  /** A failed tool call's extra detail (a stderr tail, a traceback), as its result carries it. */
  details?: string;
  retryAfterSeconds?: number;
}

export interface FailureJson {
  ok: false;
  error: DiagnosticJson;
  errors: DiagnosticJson[];
  warnings: DiagnosticJson[];
}

/** A diagnostic as data: the flat place (kept for scripts that read it) and the esbuild-style location. */
export function diagnosticJson(d: Diagnostic): DiagnosticJson {
  const { lineText: _lineText, notes, ...rest } = d;
  const location = locationJson(d);
  return { ...rest, ...(location ? { location } : {}), ...(notes ? { notes: notes.map(noteJson) } : {}) };
}

/** Diagnostics split by severity, as build, validate and the tool commands report them. */
export function diagnosticsJson(diagnostics: readonly Diagnostic[]): { errors: DiagnosticJson[]; warnings: DiagnosticJson[] } {
  return {
    errors: diagnostics.filter((d) => d.severity === 'error').map(diagnosticJson),
    warnings: diagnostics.filter((d) => d.severity === 'warning').map(diagnosticJson),
  };
}

/**
 * A failed command's JSON. `extra` is what the command adds (build's timings, a dry run's flag);
 * it cannot replace the shared keys. Diagnostics without an error (a stage stopped on warnings alone
 * does not happen, but a caller's slip must not print `error: undefined`) get an internal one.
 */
export function failureJson(diagnostics: readonly Diagnostic[], extra: Record<string, unknown> = {}): FailureJson {
  const { errors, warnings } = diagnosticsJson(diagnostics);
  if (!errors.length) errors.push(diagnosticJson(errorDiagnostic('FORGE_INTERNAL', 'the command failed without saying why')));
  return { ...extra, ok: false, error: errors[0], errors, warnings };
}

/** A failed tool call's error as a diagnostic entry: its code, words and hint, its details kept for scripts. */
export function toolErrorJson(e: ToolError, at: Location = {}): DiagnosticJson {
  const base = diagnosticJson(errorDiagnostic(e.code, e.message, at, e.hint));
  return { ...base, ...(e.details !== undefined ? { details: e.details } : {}), ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}) };
}

/**
 * A failed tool call's result (`{ ok: false, error, durationMs }`) in the shared shape: the same error, in `errors` too.
 * `warnings`: what the command warned of before the call (forge tool run: its project's warnings).
 */
export function toolFailureJson(result: { error: ToolError; durationMs?: number }, at: Location = {}, extra: Record<string, unknown> = {}, warnings: readonly Diagnostic[] = []): FailureJson {
  const entry = toolErrorJson(result.error, at);
  return { ...extra, ...(result.durationMs !== undefined ? { durationMs: result.durationMs } : {}), ok: false, error: entry, errors: [entry], warnings: warnings.map(diagnosticJson) };
}

/** With --json, the failure as the command's one JSON document on stdout; nothing otherwise (the caller prints its text). */
export function writeFailureJson(json: boolean, diagnostics: readonly Diagnostic[], extra: Record<string, unknown> = {}): void {
  if (json) process.stdout.write(jsonDocument(failureJson(diagnostics, extra)));
}

/** Text for stdout: one JSON document. */
export function jsonDocument(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

function locationJson(at: Location): LocationJson | undefined {
  if (!at.file) return undefined;
  return { file: at.file, ...(at.line ? { line: at.line } : {}), ...(at.line && at.column ? { column: at.column } : {}), ...(at.lineText !== undefined ? { lineText: at.lineText } : {}) };
}

function noteJson(n: DiagnosticNote): NoteJson {
  const { lineText: _lineText, ...rest } = n;
  const location = locationJson(n);
  return { ...rest, ...(location ? { location } : {}) };
}
