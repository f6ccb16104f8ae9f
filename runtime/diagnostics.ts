/**
 * Diagnostics are the one shape every user-facing problem takes: a location,
 * a stable code, a message and an optional hint. Rendering them (text, JSON)
 * lives in the CLI; producing them is everybody's job.
 */

import type { DiagnosticCode } from './diagnostic-codes.ts';

export type { DiagnosticCode } from './diagnostic-codes.ts';
export type Severity = 'error' | 'warning';

export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  message: string;
  hint?: string;
  file?: string;
  line?: number;     // 1-based
  column?: number;   // 1-based
  /** The source line the location points into, for a caret under it. */
  lineText?: string;
  /**
   * Other places that take part in the problem, each with its own location
   * (as esbuild's Message.notes): where a duplicated name was first defined,
   * the other end of a conflict. Never packed into the message text.
   */
  notes?: DiagnosticNote[];
}

export interface Location {
  file?: string;
  line?: number;
  column?: number;
  lineText?: string;
}

export interface DiagnosticNote extends Location {
  text: string;
}

/** A note at a location (a diagnostic's second place). */
export function note(text: string, at: Location = {}): DiagnosticNote {
  return { text, ...at };
}

/** The diagnostic with these notes added. */
export function withNotes(d: Diagnostic, ...notes: DiagnosticNote[]): Diagnostic {
  return notes.length ? { ...d, notes: [...(d.notes ?? []), ...notes] } : d;
}

export function error(code: DiagnosticCode, message: string, at: Location = {}, hint?: string): Diagnostic {
  return { severity: 'error', code, message, ...at, ...(hint ? { hint } : {}) };
}

export function warning(code: DiagnosticCode, message: string, at: Location = {}, hint?: string): Diagnostic {
  return { severity: 'warning', code, message, ...at, ...(hint ? { hint } : {}) };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** `file:line:column` (as much of it as is known). */
export function formatLocation(d: Location): string {
  if (!d.file) return '';
  let out = d.file;
  if (d.line) out += `:${d.line}`;
  if (d.line && d.column) out += `:${d.column}`;
  return out;
}

/** One-line plain rendering, used where no terminal renderer is at hand (the runtime, errors in JSON). */
export function formatDiagnostic(d: Diagnostic): string {
  const where = formatLocation(d);
  const hint = d.hint ? ` (${d.hint})` : '';
  const notes = (d.notes ?? []).map((n) => `; ${formatLocation(n) ? formatLocation(n) + ': ' : ''}${n.text}`).join('');
  return `${where ? where + ' ' : ''}${d.code} ${d.message}${notes}${hint}`;
}

/**
 * The one base of Forge's own errors: a catalog code and an optional hint.
 * Thrown out of a tool (or anything a tool calls), it keeps its code as the
 * call's result instead of becoming FORGE_TOOL_FAILED.
 */
export class ForgeError extends Error {
  constructor(
    readonly code: DiagnosticCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A ForgeError on one line: its code, message and hint in parentheses (a log line, a server's refusal to start). */
export function codedLine(err: ForgeError): string {
  return `${err.code} ${err.message}${err.hint ? ` (${err.hint})` : ''}`;
}

/** Thrown where a diagnostic must unwind the stack (config loading, CLI usage). */
export class DiagnosticError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
    this.name = 'DiagnosticError';
  }
}
