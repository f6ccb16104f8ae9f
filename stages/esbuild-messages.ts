/** esbuild's messages as Forge diagnostics (esbuild columns are 0-based; ours are 1-based). */
import { readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { Message } from 'esbuild';
import { error, warning, type Diagnostic } from '../runtime/diagnostics.ts';
import { esbuild } from './esbuild-api.ts';

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

/**
 * An error from bundling as the user would name it: an import esbuild cannot
 * find is FORGE_IMPORT, with what to do (esbuild's own note says to mark it
 * external, which Forge offers no way to do); a file that does not parse is
 * FORGE_SYNTAX, as `forge validate` calls it; anything else FORGE_BUNDLE.
 */
export function fromEsbuildError(message: Message, absWorkingDir: string, cwd: string): Diagnostic {
  const diagnostic = fromEsbuildMessage(message, 'error', absWorkingDir, cwd);
  const unresolved = /^Could not resolve "(.+)"$/.exec(message.text);
  if (unresolved) return { ...diagnostic, code: 'FORGE_IMPORT', hint: importHint(unresolved[1]) };
  if (message.location && doesNotParse(join(absWorkingDir, message.location.file), message.location.line)) return asSyntaxError(diagnostic);
  return diagnostic;
}

/**
 * A parse error as FORGE_SYNTAX. esbuild's "Unexpected end of file" stands past the last line, far from
 * the mistake, and says nothing of it: the hint says what it is.
 */
export function asSyntaxError(diagnostic: Diagnostic): Diagnostic {
  const hint = diagnostic.hint ?? (/^Unexpected end of file\b/.test(diagnostic.message) ? 'something opened earlier in the file is never closed: a brace, bracket or parenthesis, a string, template or comment' : undefined);
  return { ...diagnostic, code: 'FORGE_SYNTAX', ...(hint ? { hint } : {}) };
}

function importHint(specifier: string): string {
  if (/^[./]/.test(specifier)) return 'no file is there, from the importing file: check the path, and that the file is in the project';
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  return `install it in the project (npm install ${name}), or check its name`;
}

/** Whether the file fails to parse on its own, at `line` (only asked once a bundle failed). */
function doesNotParse(file: string, line: number): boolean {
  const loader = ({ '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.jsx': 'jsx' } as const)[extname(file)] ?? 'js';
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  try {
    esbuild.transformSync(source, { loader, logLevel: 'silent' });
    return false;
  } catch (err) {
    return ((err as { errors?: Message[] }).errors ?? []).some((m) => m.location?.line === line);
  }
}
