/**
 * Prints diagnostics like a compiler: the location and code first (one
 * grep-able line), then the source line with a caret under the column, then
 * the hint. Data and rendering stay apart: --json prints the same objects.
 */
import { formatLocation, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import { errColor as c } from './terminal.ts';

export function renderDiagnostic(d: Diagnostic): string {
  const mark = d.severity === 'error' ? c.red('✘') : c.yellow('▲');
  const where = formatLocation(d);
  const lines = [`${mark} ${where ? c.bold(where) + ' ' : ''}${c.dim(d.code)} ${d.message}`, ...sourceLines(d, '  ')];
  // Each note under its message, with its own location and caret (as esbuild prints them).
  for (const n of d.notes ?? []) {
    const at = formatLocation(n);
    lines.push(`  ${c.cyan('note:')} ${at ? c.bold(at) + ' ' : ''}${n.text}`, ...sourceLines(n, '    '));
  }
  if (d.hint) lines.push(`  ${c.cyan('hint:')} ${d.hint}`);
  return lines.join('\n');
}

/** The source line a location points into, with a caret under its column. */
function sourceLines(at: Location, indent: string): string[] {
  if (!at.line || at.lineText === undefined) return [];
  const gutter = String(at.line);
  const lines = [`${indent}${c.dim(gutter + ' │')} ${at.lineText.replace(/\t/g, ' ')}`];
  if (at.column) lines.push(`${indent}${' '.repeat(gutter.length)} ${c.dim('│')} ${' '.repeat(Math.max(0, at.column - 1))}${c.green('^')}`);
  return lines;
}

export function printDiagnostics(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) process.stderr.write(renderDiagnostic(d) + '\n');
}
