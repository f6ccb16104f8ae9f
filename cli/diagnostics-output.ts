/**
 * Prints diagnostics like a compiler: the location and code first (one
 * grep-able line), then the source line with a caret under the column, then
 * the hint. Data and rendering stay apart: --json prints the same objects.
 */
import { formatLocation, type Diagnostic } from '../runtime/diagnostics.ts';
import { errColor as c } from './terminal.ts';

export function renderDiagnostic(d: Diagnostic): string {
  const mark = d.severity === 'error' ? c.red('✘') : c.yellow('▲');
  const where = formatLocation(d);
  const lines = [`${mark} ${where ? c.bold(where) + ' ' : ''}${c.dim(d.code)} ${d.message}`];
  if (d.line && d.lineText !== undefined) {
    const gutter = String(d.line);
    const text = d.lineText.replace(/\t/g, ' ');
    lines.push(`  ${c.dim(gutter + ' │')} ${text}`);
    if (d.column) lines.push(`  ${' '.repeat(gutter.length)} ${c.dim('│')} ${' '.repeat(Math.max(0, d.column - 1))}${c.green('^')}`);
  }
  if (d.hint) lines.push(`  ${c.cyan('hint:')} ${d.hint}`);
  return lines.join('\n');
}

export function printDiagnostics(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) process.stderr.write(renderDiagnostic(d) + '\n');
}

/** JSON form: the data without the source line (which is for eyes, not programs). */
export function diagnosticJson(d: Diagnostic): Omit<Diagnostic, 'lineText'> {
  const { lineText: _lineText, ...rest } = d;
  return rest;
}
