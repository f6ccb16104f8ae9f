/** esbuild's messages as Forge diagnostics (esbuild columns are 0-based; ours are 1-based). */
import { join, relative } from 'node:path';
import type { Message } from 'esbuild';
import { error, warning, type Diagnostic } from '../runtime/diagnostics.ts';

export function fromEsbuildMessage(message: Message, severity: 'error' | 'warning', absWorkingDir: string, cwd: string): Diagnostic {
  const loc = message.location;
  const at = loc
    ? {
        file: relative(cwd, join(absWorkingDir, loc.file)) || loc.file,
        line: loc.line,
        column: loc.column + 1,
        lineText: loc.lineText,
      }
    : {};
  const hint = message.notes.map((n) => n.text).filter(Boolean).join(' ') || undefined;
  const make = severity === 'error' ? error : warning;
  return make(severity === 'error' ? 'FORGE_BUNDLE' : 'FORGE_BUNDLE_WARNING', message.text, at, hint);
}
