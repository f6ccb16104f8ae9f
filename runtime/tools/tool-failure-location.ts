/**
 * Where in the project's own code a tool's call failed: the innermost frame
 * of a Python traceback or a JavaScript stack that is a file under one of the
 * tool dirs, with its source line. `forge tool run` and the bundle's `call`
 * print a failure there like a compiler's diagnostic (the traceback itself
 * with --verbose, or FORGE_VERBOSE=1).
 */
import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import type { Location } from '../diagnostics.ts';

interface Frame {
  file: string;
  line: number;
  column?: number;
  /** Python's frame: how far its carets (3.11+) stand into the line as the traceback shows it, stripped. */
  caretOffset?: number;
}

/** `File "/p/tools/x.py", line 9, in helper`, the line, and 3.11's `~~^^` under it when there are any (innermost last). */
function pythonFrames(details: string): Frame[] {
  return [...details.matchAll(/^[ \t]*File "([^"\n]+)", line (\d+)[^\n]*\n(?:( *)(?!File ")\S[^\n]*\n(?:( *)[~^]+ *(?:\n|$))?)?/gm)]
    .map((m) => ({ file: m[1], line: Number(m[2]), ...(m[3] !== undefined && m[4] !== undefined ? { caretOffset: m[4].length - m[3].length } : {}) }))
    .reverse();
}

/** `at execute (/p/tools/x.ts:9:9)` or `at /p/tools/x.ts:9:9` (innermost first). */
function javascriptFrames(details: string): Frame[] {
  return [...details.matchAll(/^\s*at (?:.*? \()?(?:file:\/\/)?(\/[^()\n]+?):(\d+):(\d+)\)?$/gm)].map((m) => ({ file: m[1], line: Number(m[2]), column: Number(m[3]) }));
}

export function toolFailureLocation(details: string | undefined, toolDirs: readonly string[], cwd = process.cwd()): Location | undefined {
  if (!details) return undefined;
  const inToolDirs = (file: string) => toolDirs.some((dir) => resolve(file).startsWith(resolve(dir) + sep)) && !file.includes(`${sep}node_modules${sep}`);
  const frame = [...pythonFrames(details), ...javascriptFrames(details)].find((f) => inToolDirs(f.file));
  if (!frame) return undefined;
  let lineText: string | undefined;
  try {
    lineText = readFileSync(frame.file, 'utf8').split(/\r?\n/)[frame.line - 1];
  } catch {
    // The file changed or went since the call: the location alone still says where.
  }
  // A Python frame's column: where its carets start, else where its statement starts.
  const indent = lineText === undefined ? undefined : lineText.length - lineText.trimStart().length;
  const column = frame.column ?? (indent === undefined ? undefined : indent + Math.max(0, frame.caretOffset ?? 0) + 1);
  return { file: relative(cwd, frame.file) || frame.file, line: frame.line, ...(column ? { column } : {}), ...(lineText !== undefined ? { lineText } : {}) };
}

