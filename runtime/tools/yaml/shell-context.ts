/**
 * Where each placeholder stands in a shell script: bare, inside '...',
 * inside "...", inside $'...', in a comment or in a here-document. The
 * escaping that makes a value literal differs in each, so the script's
 * text around the placeholders is read the way the shell will read it.
 *
 * Where no escaping can be trusted — inside backticks, inside ${...},
 * right after a backslash, in a here-document's delimiter — the
 * placeholder is refused when the tool is loaded, never guessed at.
 *
 * Bash evaluates some text as arithmetic even when it is quoted — in
 * $((...)), ((...)), let, [[ ... -eq ... ]], array subscripts and
 * assignments to integer variables — and arithmetic runs the command
 * substitutions of array subscripts ('a[$(id)]'). Placeholders standing
 * there, at any depth, take numbers only (`numeric` says why).
 */

export type ShellDialect = 'bash' | 'posix';

export type ShellContext =
  | { kind: 'bare' }
  | { kind: 'single' }
  | { kind: 'double' }
  | { kind: 'ansi' }
  | { kind: 'comment' }
  | { kind: 'heredoc'; heredoc: number; quoted: boolean }
  | { kind: 'unsupported'; reason: string; hint: string };

export interface Heredoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
  /** Offsets in the script's literal text: the body, up to its closing line. */
  bodyStart: number;
  bodyEnd: number;
}

interface CodeFrame {
  mode: 'code';
  close: ')' | '`' | undefined;
  depth: number;
  caseDepth: number;
  /** The current word's letters (for case/esac). */
  word: string;
  /** The current word as written so far (for let, [[, name[...]= and name=). */
  current: string;
  arith: boolean;
  letActive: boolean;
  /** The first word of the command in progress (eval runs its arguments as code). */
  command?: string;
  test?: { placeholders: number[]; text: string };
}

type Frame =
  | CodeFrame
  | { mode: 'param'; depth: number }
  | { mode: 'double' }
  | { mode: 'single' }
  | { mode: 'ansi' }
  | { mode: 'comment' }
  | { mode: 'heredoc'; index: number; atLineStart: boolean };

const WORD_BREAK = /[\s;&|()<>]/;
const ARITHMETIC_TEST = /(^|\s)-(eq|ne|lt|le|gt|ge|v)(\s|$)/;
const INTEGER_DECLARATION = /\b(declare|typeset|local|export|readonly)\s+-[A-Za-z]*i/;

function codeFrame(close: CodeFrame['close'], arith = false, depth = 0): CodeFrame {
  return { mode: 'code', close, depth, caseDepth: 0, word: '', current: '', arith, letActive: false };
}

export interface ShellAnalysis {
  contexts: ShellContext[];
  heredocs: Heredoc[];
  /** Per placeholder: why only a number may stand there (bash arithmetic), if it is so. */
  numeric: (string | undefined)[];
}

export function analyzeShell(text: string, positions: readonly number[], dialect: ShellDialect = 'bash'): ShellAnalysis {
  const contexts: ShellContext[] = [];
  const numeric: (string | undefined)[] = [];
  const heredocs: Heredoc[] = [];
  const pending: Omit<Heredoc, 'bodyStart' | 'bodyEnd'>[] = [];
  const stack: Frame[] = [codeFrame(undefined)];
  const integerVariables = INTEGER_DECLARATION.test(text);
  let next = 0; // the next position to classify
  let wordBefore = false; // the previous character (or a placeholder) belongs to a word

  const top = () => stack[stack.length - 1];
  const unsupported = (reason: string, hint: string): ShellContext => ({ kind: 'unsupported', reason, hint });
  const current = (): ShellContext => {
    if (stack.some((f) => f.mode === 'code' && f.close === '`')) return unsupported('inside backticks', 'use $(...) instead of `...`');
    if (stack.some((f) => f.mode === 'param')) return unsupported('inside ${...}', 'assign the placeholder to a variable first: v={NAME}; echo "${v:-default}"');
    if (stack.some((f) => f.mode === 'code' && f.command === 'eval')) return unsupported('in an eval command, which runs its arguments as code', 'do not eval values; if you must, say so with {RAW:NAME}');
    const f = top();
    switch (f.mode) {
      case 'code':
        return { kind: 'bare' };
      case 'heredoc':
        return { kind: 'heredoc', heredoc: f.index, quoted: heredocs[f.index].quoted };
      case 'param':
        return unsupported('inside ${...}', 'assign it to a variable first');
      default:
        return { kind: f.mode };
    }
  };
  /** Why a value here is evaluated as arithmetic: any enclosing code frame decides. */
  const arithmeticReason = (): string | undefined => {
    for (const f of stack) {
      if (f.mode !== 'code') continue;
      if (f.arith) return 'inside an arithmetic expression';
      if (f.letActive) return 'in a let expression';
      if (/^[A-Za-z_][A-Za-z0-9_]*\[[^\]]*$/.test(f.current)) return 'in an array subscript';
      if (integerVariables && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(f.current)) return 'assigned in a script that declares integer variables';
    }
    return undefined;
  };
  /** Classifies the placeholders standing at offset `at`. */
  const classifyAt = (at: number, context: () => ShellContext) => {
    // A placeholder that fell inside a token no branch below looks into cannot be escaped.
    while (next < positions.length && positions[next] < at) contexts[next++] = unsupported('inside a shell operator or keyword', 'separate the placeholder from the characters around it');
    while (next < positions.length && positions[next] === at) {
      numeric[next] = arithmeticReason();
      for (const f of stack) if (f.mode === 'code' && f.test) f.test.placeholders.push(next);
      contexts[next++] = context();
      wordBefore = true;
    }
  };
  /** A word of a code frame ends: let, [[ and ]] change what follows. */
  const endWord = (frame: CodeFrame, separator: string) => {
    const word = frame.current;
    frame.current = '';
    if (word && frame.command === undefined) frame.command = word;
    if (word === 'let') frame.letActive = true;
    else if (word === '[[') frame.test = { placeholders: [], text: '' };
    else if (word === ']]' && frame.test) {
      if (ARITHMETIC_TEST.test(frame.test.text)) for (const n of frame.test.placeholders) numeric[n] ??= 'in a [[ ]] test that compares numbers';
      frame.test = undefined;
    }
    if (/[;&|\n()]/.test(separator)) {
      frame.letActive = false;
      frame.command = undefined;
    }
  };
  /** Placeholders strictly inside a multi-character token cannot be escaped. */
  const refuseInside = (from: number, to: number, reason: string, hint: string) => {
    for (let p = from + 1; p < to; p++) classifyAt(p, () => unsupported(reason, hint));
  };
  const afterBackslash = () => unsupported('right after a backslash', 'remove the backslash: the value is escaped for you');

  let i = 0;
  while (i <= text.length) {
    const frame = top();
    if (frame.mode === 'heredoc' && frame.atLineStart) {
      frame.atLineStart = false;
      const doc = heredocs[frame.index];
      const end = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
      const line = text.slice(i, end);
      if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
        for (let p = i; p <= end; p++) classifyAt(p, () => unsupported("on a here-document's closing line", 'put the placeholder on a line of its own inside the here-document'));
        doc.bodyEnd = i;
        stack.pop();
        const following = top();
        if (following.mode === 'heredoc' && end < text.length) {
          // The next here-document of the same line starts after this one's closing line.
          heredocs[following.index].bodyStart = end + 1;
          i = end + 1;
        } else {
          i = end; // the code frame reads the newline
        }
        continue;
      }
    }
    classifyAt(i, current);
    if (i === text.length) break;
    const c = text[i];
    const d = text[i + 1];

    switch (frame.mode) {
      case 'single':
        if (c === "'") stack.pop();
        i++;
        wordBefore = true;
        continue;
      case 'comment':
        if (c === '\n') {
          stack.pop();
          continue; // the code frame handles the newline (a here-document may start after it)
        }
        i++;
        continue;
      case 'ansi':
        if (c === '\\') {
          classifyAt(i + 1, afterBackslash);
          i += 2;
        } else {
          if (c === "'") {
            stack.pop();
            wordBefore = true;
          }
          i++;
        }
        continue;
      case 'double':
      case 'heredoc': {
        if (frame.mode === 'heredoc' && heredocs[frame.index].quoted) {
          if (c === '\n') frame.atLineStart = true;
          i++;
          continue;
        }
        if (c === '\\') {
          classifyAt(i + 1, afterBackslash);
          i += 2;
          if (frame.mode === 'heredoc' && d === '\n') frame.atLineStart = true;
          continue;
        }
        if (c === '"' && frame.mode === 'double') {
          stack.pop();
          i++;
          wordBefore = true;
          continue;
        }
        if (c === '\n' && frame.mode === 'heredoc') {
          frame.atLineStart = true;
          i++;
          continue;
        }
        const opened = openExpansion(c, d, i, false);
        if (opened) {
          i = opened;
          continue;
        }
        i++;
        continue;
      }
      case 'param': {
        if (c === '\\') {
          classifyAt(i + 1, afterBackslash);
          i += 2;
          continue;
        }
        if (c === '}') {
          if (frame.depth === 0) {
            stack.pop();
            wordBefore = true;
          } else frame.depth--;
          i++;
          continue;
        }
        if (c === '{') frame.depth++;
        if (c === "'" || c === '"') {
          stack.push(c === "'" ? { mode: 'single' } : { mode: 'double' });
          i++;
          continue;
        }
        const opened = openExpansion(c, d, i, false);
        i = opened ?? i + 1;
        continue;
      }
      case 'code': {
        if (/[A-Za-z0-9_]/.test(c)) frame.word += c;
        else {
          if (frame.word === 'case') frame.caseDepth++;
          else if (frame.word === 'esac' && frame.caseDepth > 0) frame.caseDepth--;
          frame.word = '';
        }
        if (frame.test) frame.test.text += c;
        if (WORD_BREAK.test(c)) endWord(frame, c);
        else if (c !== '\\') frame.current += c;
        if (c === '(' && d === '(' && frame.current === '' && !wordBefore) {
          // ((...)): an arithmetic command, closed by its "))".
          stack.push(codeFrame(')', true, 1));
          i += 2;
          continue;
        }
        if (c === '\\') {
          classifyAt(i + 1, afterBackslash);
          i += 2;
          if (d !== '\n') wordBefore = true; // a line continuation joins the word around it
          continue;
        }
        if (c === "'") {
          stack.push({ mode: 'single' });
          i++;
          continue;
        }
        if (c === '"') {
          stack.push({ mode: 'double' });
          i++;
          continue;
        }
        if (c === '#' && !wordBefore) {
          stack.push({ mode: 'comment' });
          i++;
          continue;
        }
        if (c === '`' && frame.close === '`') {
          stack.pop();
          i++;
          wordBefore = true;
          continue;
        }
        if (c === '(') frame.depth++;
        if (c === ')') {
          if (frame.close === ')' && frame.depth === 0 && frame.caseDepth === 0) {
            stack.pop();
            i++;
            wordBefore = true;
            continue;
          }
          if (frame.depth > 0) frame.depth--;
        }
        if (c === '<' && d === '<') {
          if (text[i + 2] === '<') {
            i += 3;
            wordBefore = false;
            continue;
          }
          i = readHeredocStart(i);
          wordBefore = true;
          continue;
        }
        if (c === '\n' && pending.length) {
          startHeredoc(i + 1);
          i++;
          wordBefore = false;
          continue;
        }
        const opened = openExpansion(c, d, i, true);
        if (opened) {
          i = opened;
          continue;
        }
        wordBefore = !WORD_BREAK.test(c);
        i++;
        continue;
      }
    }
  }
  for (const f of stack) if (f.mode === 'code') endWord(f, '\n');
  // A here-document still open at the end runs to the end of the script.
  for (const doc of heredocs) {
    if (doc.bodyStart < 0) doc.bodyStart = text.length;
    if (doc.bodyEnd < 0) doc.bodyEnd = text.length;
  }
  return { contexts, heredocs, numeric };

  /** `$(`, `${`, `$'`, `$"`, a backtick: pushes the frame and returns the next offset. */
  function openExpansion(c: string, d: string | undefined, at: number, inCode: boolean): number | undefined {
    if (c === '`') {
      stack.push(codeFrame('`'));
      return at + 1;
    }
    if (c !== '$') return undefined;
    classifyAt(at + 1, () => unsupported('right after "$"', 'put a space or quote between "$" and the placeholder'));
    if (d === '(') stack.push(codeFrame(')', text[at + 2] === '('));
    else if (d === '{') stack.push({ mode: 'param', depth: 0 });
    else if (d === "'" && inCode && dialect === 'bash') stack.push({ mode: 'ansi' });
    else if (d === '"' && inCode && dialect === 'bash') stack.push({ mode: 'double' });
    else {
      wordBefore = true;
      return at + 1;
    }
    return at + 2;
  }

  /** Reads `<<[-]WORD` and queues the here-document; returns the offset after WORD. */
  function readHeredocStart(at: number): number {
    let j = at + 2;
    const stripTabs = text[j] === '-';
    if (stripTabs) j++;
    while (text[j] === ' ' || text[j] === '\t') j++;
    let delimiter = '';
    let quoted = false;
    while (j < text.length && !WORD_BREAK.test(text[j])) {
      const ch = text[j];
      if (ch === "'" || ch === '"') {
        quoted = true;
        const close = text.indexOf(ch, j + 1);
        const end = close < 0 ? text.length : close;
        delimiter += text.slice(j + 1, end);
        j = end + 1;
      } else if (ch === '\\') {
        quoted = true;
        delimiter += text[j + 1] ?? '';
        j += 2;
      } else {
        delimiter += ch;
        j++;
      }
    }
    refuseInside(at, j + 1, "in a here-document's delimiter", 'write the delimiter literally, e.g. <<EOF');
    pending.push({ delimiter, quoted, stripTabs });
    return Math.min(j, text.length);
  }

  function startHeredoc(bodyStart: number) {
    // Several here-documents on one line follow each other; start the first,
    // and the rest as each one closes (they are pushed in reverse order).
    const docs = pending.splice(0);
    const indexes = docs.map((doc) => heredocs.push({ ...doc, bodyStart: -1, bodyEnd: -1 }) - 1);
    for (const index of [...indexes].reverse()) stack.push({ mode: 'heredoc', index, atLineStart: true });
    heredocs[indexes[0]].bodyStart = bodyStart;
  }
}
