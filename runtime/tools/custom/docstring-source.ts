/**
 * Finds a tool's docstring in its source file and returns its lines with
 * their positions in the file, so every diagnostic can point at file:line:column.
 *
 * Python: the module docstring (the first statement, a triple-quoted string).
 * TypeScript/JavaScript: the first block comment that has a `Tool:` line.
 */
import { closestMatch } from '../../suggest.ts';
import { textPosition } from '../../text-position.ts';

export interface DocLine {
  text: string;
  /** 1-based line in the source file. */
  line: number;
  /** 1-based column in the source file of text[0]. */
  column: number;
  /** The whole line as it is in the file (for a caret under the column). */
  source?: string;
}

export interface ExtractedDocstring {
  lines: DocLine[];
  /** Line of the opening delimiter. */
  line: number;
}

export type ExtractResult =
  | { kind: 'found'; docstring: ExtractedDocstring }
  | { kind: 'none' }
  | { kind: 'unterminated'; line: number; column: number };

export function extractPythonDocstring(source: string): ExtractResult {
  const lines = source.split(/\r?\n/);
  let i = 0;
  for (; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    break;
  }
  if (i >= lines.length) return { kind: 'none' };
  const open = /^(\s*)([rRuU]{0,2})("""|''')/.exec(lines[i]);
  if (!open) return { kind: 'none' };
  const quote = open[3];
  const startLine = i + 1;
  const out: DocLine[] = [];
  let col = open[0].length; // 0-based column where content begins on the first line
  for (let n = i; n < lines.length; n++) {
    const text = lines[n];
    const from = n === i ? col : 0;
    const close = text.indexOf(quote, from);
    if (close >= 0) {
      out.push({ text: text.slice(from, close), line: n + 1, column: from + 1 });
      return { kind: 'found', docstring: { lines: withSourceLines(cleanIndentation(out, true), lines), line: startLine } };
    }
    out.push({ text: text.slice(from), line: n + 1, column: from + 1 });
    col = 0;
  }
  return { kind: 'unterminated', line: startLine, column: open[1].length + 1 };
}

const BLOCK_COMMENT = /\/\*([\s\S]*?)(\*\/|$)/g;

export function extractScriptDocstring(source: string): ExtractResult {
  const body = source.startsWith('#!') ? source.replace(/^#![^\n]*/, (s) => ' '.repeat(s.length)) : source;
  BLOCK_COMMENT.lastIndex = 0;
  for (let match = BLOCK_COMMENT.exec(body); match; match = BLOCK_COMMENT.exec(body)) {
    const inner = match[1];
    if (!/^[\s*]*Tool\s*:/im.test(inner)) continue;
    const start = match.index;
    const startLine = lineOf(body, start);
    if (match[2] !== '*/') return { kind: 'unterminated', line: startLine, column: start - body.lastIndexOf('\n', start - 1) };
    // The comment's content begins after "/*" (and a further "*" for JSDoc).
    let offset = start + 2;
    if (body[offset] === '*' && body[offset + 1] !== '/') offset += 1;
    const content = body.slice(offset, start + 2 + inner.length);
    const raw = content.split('\n');
    const out: DocLine[] = [];
    let lineNo = lineOf(body, offset);
    let firstCol = offset - body.lastIndexOf('\n', offset - 1);
    for (const [k, rawText] of raw.entries()) {
      let text = rawText.replace(/\r$/, '');
      let column = k === 0 ? firstCol : 1;
      // Strip the leading " * " decoration of JSDoc-style comments.
      const star = /^(\s*)\*(?!\/)( ?)/.exec(text);
      if (k > 0 && star) {
        column += star[0].length;
        text = text.slice(star[0].length);
      }
      out.push({ text, line: lineNo, column });
      lineNo++;
    }
    return { kind: 'found', docstring: { lines: withSourceLines(cleanIndentation(out, false), source.split(/\r?\n/)), line: startLine } };
  }
  return { kind: 'none' };
}

function withSourceLines(lines: DocLine[], fileLines: string[]): DocLine[] {
  return lines.map((l) => ({ ...l, source: fileLines[l.line - 1] }));
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Removes the common indentation (like Python's inspect.cleandoc) and the
 * blank lines around the text, keeping each line's file position right.
 */
function cleanIndentation(lines: DocLine[], firstLineSeparately: boolean): DocLine[] {
  const measured = firstLineSeparately ? lines.slice(1) : lines;
  let common = Infinity;
  for (const l of measured) {
    if (l.text.trim() === '') continue;
    common = Math.min(common, l.text.length - l.text.trimStart().length);
  }
  if (!Number.isFinite(common)) common = 0;
  const cleaned = lines.map((l, index) => {
    const cut = firstLineSeparately && index === 0 ? l.text.length - l.text.trimStart().length : Math.min(common, l.text.length - l.text.trimStart().length);
    return { text: l.text.slice(cut).replace(/\s+$/, ''), line: l.line, column: l.column + cut, source: l.source };
  });
  while (cleaned.length && cleaned[0].text === '') cleaned.shift();
  while (cleaned.length && cleaned[cleaned.length - 1].text === '') cleaned.pop();
  return cleaned;
}

/**
 * True when a source file defines `execute(args)` at its top level (served by
 * a worker): as a named export, on the default export, or on CommonJS's
 * module.exports. A module that exports execute in a way not seen here would
 * be run as a script, which prints nothing: an empty success (so the build
 * warns about such a file: scriptToolProblem).
 */
export function definesExecute(kind: 'python' | 'typescript' | 'javascript', source: string): boolean {
  if (kind === 'python') return /^(async\s+)?def\s+execute\s*\(/m.test(source);
  return JS_EXECUTE_EXPORTS.some((pattern) => pattern.test(source));
}

const JS_EXECUTE_EXPORTS = [
  /^\s*export\s+(async\s+)?function\s*\*?\s*execute\s*(<[^>]*>)?\s*\(/m, // export function execute( (or execute<T>()
  /^\s*export\s+(const|let|var)\s+execute\s*[=:]/m, // export const execute =
  /^\s*export\s*\{[^}]*\bexecute\b[^}]*\}/m, // export { execute }
  /^\s*export\s+default\s*\{[^}]*\bexecute\b/m, // export default { execute(args) {…} }
  /^\s*export\s+default\s+(async\s+)?function\s*\*?\s*execute\s*(<[^>]*>)?\s*\(/m, // export default function execute(
  /^\s*export\s+default\s+execute\s*;?\s*$/m, // export default execute;
  /^\s*(module\.)?exports\.execute\s*=/m, // exports.execute = …
  /^\s*module\.exports\s*=\s*\{[^}]*\bexecute\b/m, // module.exports = { execute … }
];

export interface ScriptToolProblem {
  code: 'FORGE_EXECUTE_NOT_EXPORTED' | 'FORGE_SCRIPT_READS_NOTHING';
  message: string;
  hint: string;
  line: number;
  column: number;
}

/**
 * What makes a tool that runs as a script (no execute found) likely a
 * mistake, since it would then answer with an empty success: a TS/JS file
 * that defines execute without exporting it in a way the runtime finds, or
 * a file with declared inputs that never reads its standard input (where
 * a script gets them), as with `def exceute(args):`.
 */
export function scriptToolProblem(kind: 'python' | 'typescript' | 'javascript', source: string, takesInput: boolean): ScriptToolProblem | undefined {
  // A script that reads its standard input is a script, whatever it names its functions.
  if (READS_STDIN[kind === 'python' ? 'python' : 'js'].test(source)) return undefined;
  const at = (index: number) => {
    const { line, column } = textPosition(source, index);
    return { line, column };
  };
  if (kind !== 'python') {
    const defined = /^[ \t]*(?:export\s+default\s+)?(?:(?:async\s+)?function\s*\*?\s*execute\s*(?:<[^>]*>)?\s*\(|(?:const|let|var)\s+execute\s*[=:])/m.exec(source);
    if (defined) {
      return { code: 'FORGE_EXECUTE_NOT_EXPORTED', message: 'execute is defined but not exported where Forge looks, so the tool runs as a script: it would get its arguments on stdin and answer with what it prints', hint: 'export it: export function execute(args) { … }', ...at(defined.index + defined[0].indexOf('execute')) };
    }
  }
  if (!takesInput) return undefined;
  // A function whose name is execute misspelt (def exceute, function excute): there, with the name it meant.
  const functions = kind === 'python' ? /^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(/gm : /^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function[ \t]*\*?[ \t]*(\w+)/gm;
  const misspelt = [...source.matchAll(functions)].find((m) => m[1] !== 'execute' && closestMatch(m[1], ['execute']) === 'execute');
  if (misspelt) {
    return {
      code: 'FORGE_SCRIPT_READS_NOTHING',
      message: `the tool declares inputs but defines no execute${kind === 'python' ? '(args)' : ' export'}, only "${misspelt[1]}", and never reads its standard input: every call would answer with what it prints`,
      hint: `did you mean "execute"?`,
      ...at(misspelt.index + misspelt[0].lastIndexOf(misspelt[1])),
    };
  }
  return {
    code: 'FORGE_SCRIPT_READS_NOTHING',
    message: `the tool declares inputs but defines no execute${kind === 'python' ? '(args)' : ' export'} and never reads its standard input, where a script gets them: every call would answer with what it prints`,
    hint: kind === 'python' ? 'define def execute(args): and return the result (check its spelling), or read json.load(sys.stdin)' : 'export function execute(args) { … }, or read the arguments as JSON from stdin',
    line: 1,
    column: 1,
  };
}

/** What reading standard input looks like: sys.stdin (and __stdin__), input(), fd 0, /dev/stdin, argv-based parsers. */
const READS_STDIN = {
  python: /stdin|\binput\s*\(|\bargv\b|\bfileinput\b|\bargparse\b|\bclick\b|\bos\.read\(\s*0\b|\bopen\(\s*0\b|\/dev\/stdin/,
  js: /\bstdin\b|(?:readFileSync|readSync|createReadStream)\(\s*0\b|\/dev\/stdin|\bargv\b/,
};
