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
  /** Where the current word starts in the text (while `current` is not empty). */
  wordStart: number;
  /** Placeholders already standing in the current word. */
  valuesInWord: number;
  /** The command in progress had a `--` argument: what follows are operands, never options. */
  endOfOptions: boolean;
  /** The word in progress is a redirection's target (`> {file}`, `<<< {text}`), not an argument. */
  redirect: boolean;
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

/**
 * Words that come before a command without being it (`if git ...`, `LC_ALL=C du ...`): the command
 * in progress is the word after them.
 */
const COMMAND_PREFIX = /^(if|then|else|elif|do|while|until|time|!|\{|[A-Za-z_][A-Za-z0-9_]*=.*)$/;

/** Commands whose words are never read as options: shell syntax, not a program's arguments. */
const NO_OPTIONS = new Set(['case', 'for', 'select', '[[']);

/** Commands that read options only before their first operand (`printf FORMAT ARGS`, bash's `echo`). */
export const OPTIONS_FIRST: ReadonlySet<string> = new Set(['printf', 'echo']);

function codeFrame(close: CodeFrame['close'], arith = false, depth = 0): CodeFrame {
  return { mode: 'code', close, depth, caseDepth: 0, word: '', current: '', arith, letActive: false, wordStart: 0, valuesInWord: 0, endOfOptions: false, redirect: false };
}

export interface ShellAnalysis {
  contexts: ShellContext[];
  heredocs: Heredoc[];
  /** Per placeholder: why only a number may stand there (bash arithmetic), if it is so. */
  numeric: (string | undefined)[];
  /**
   * Per placeholder that starts an argument of a command (before any `--`): that command, which would
   * read a value starting with "-" as one of its options (`du -sh {path}` with path "--files0-from=...").
   */
  optionOf: (string | undefined)[];
}

export function analyzeShell(text: string, positions: readonly number[], dialect: ShellDialect = 'bash'): ShellAnalysis {
  return new ShellScanner(text, positions, dialect).scan();
}

const afterBackslash = (): ShellContext => unsupported('right after a backslash', 'remove the backslash: the value is escaped for you');

function unsupported(reason: string, hint: string): ShellContext {
  return { kind: 'unsupported', reason, hint };
}

/**
 * Reads a script once, left to right, with a stack of frames (code, quotes,
 * expansions, here-documents). Each `scan…` method reads from one offset in
 * its frame's mode and returns the offset to read next; placeholders are
 * classified as the reading passes their offsets.
 */
class ShellScanner {
  private readonly contexts: ShellContext[] = [];
  private readonly numeric: (string | undefined)[] = [];
  private readonly optionOf: (string | undefined)[] = [];
  private readonly heredocs: Heredoc[] = [];
  /** Here-documents whose `<<WORD` was read; their bodies start on the next line. */
  private readonly pending: Omit<Heredoc, 'bodyStart' | 'bodyEnd'>[] = [];
  private readonly stack: Frame[] = [codeFrame(undefined)];
  private readonly integerVariables: boolean;
  /** The next placeholder to classify. */
  private next = 0;
  /** The previous character (or a placeholder) belongs to a word. */
  private wordBefore = false;

  constructor(
    private readonly text: string,
    private readonly positions: readonly number[],
    private readonly dialect: ShellDialect,
  ) {
    this.integerVariables = INTEGER_DECLARATION.test(text);
  }

  scan(): ShellAnalysis {
    const { text } = this;
    let i = 0;
    while (i <= text.length) {
      const frame = this.top();
      if (frame.mode === 'heredoc' && frame.atLineStart) {
        frame.atLineStart = false;
        const closedAt = this.closeHeredocAt(frame, i);
        if (closedAt !== undefined) {
          i = closedAt;
          continue;
        }
      }
      this.classifyAt(i, () => this.current());
      if (i === text.length) break;
      i = this.step(frame, i);
    }
    for (const f of this.stack) if (f.mode === 'code') this.endWord(f, '\n');
    // A here-document still open at the end runs to the end of the script.
    for (const doc of this.heredocs) {
      if (doc.bodyStart < 0) doc.bodyStart = text.length;
      if (doc.bodyEnd < 0) doc.bodyEnd = text.length;
    }
    return { contexts: this.contexts, heredocs: this.heredocs, numeric: this.numeric, optionOf: this.optionOf };
  }

  /** Reads the character at `i` in `frame`'s mode; returns the offset to read next. */
  private step(frame: Frame, i: number): number {
    switch (frame.mode) {
      case 'single':
        return this.scanSingle(i);
      case 'comment':
        return this.scanComment(i);
      case 'ansi':
        return this.scanAnsi(i);
      case 'double':
      case 'heredoc':
        return this.scanDoubleQuoted(frame, i);
      case 'param':
        return this.scanParam(frame, i);
      case 'code':
        return this.scanCode(frame, i);
    }
  }

  private top(): Frame {
    return this.stack[this.stack.length - 1];
  }

  /** The context of a placeholder standing where the reading is now. */
  private current(): ShellContext {
    const { stack } = this;
    if (stack.some((f) => f.mode === 'code' && f.close === '`')) return unsupported('inside backticks', 'use $(...) instead of `...`');
    if (stack.some((f) => f.mode === 'param')) return unsupported('inside ${...}', 'assign the placeholder to a variable first: v={NAME}; echo "${v:-default}"');
    if (stack.some((f) => f.mode === 'code' && f.command === 'eval')) return unsupported('in an eval command, which runs its arguments as code', 'do not eval values; if you must, say so with {RAW:NAME}');
    const f = this.top();
    switch (f.mode) {
      case 'code':
        return { kind: 'bare' };
      case 'heredoc':
        return { kind: 'heredoc', heredoc: f.index, quoted: this.heredocs[f.index].quoted };
      case 'param':
        return unsupported('inside ${...}', 'assign it to a variable first');
      default:
        return { kind: f.mode };
    }
  }

  /** Why a value here is evaluated as arithmetic: any enclosing code frame decides. */
  private arithmeticReason(): string | undefined {
    for (const f of this.stack) {
      if (f.mode !== 'code') continue;
      if (f.arith) return 'inside an arithmetic expression';
      if (f.letActive) return 'in a let expression';
      if (/^[A-Za-z_][A-Za-z0-9_]*\[[^\]]*$/.test(f.current)) return 'in an array subscript';
      if (this.integerVariables && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(f.current)) return 'assigned in a script that declares integer variables';
    }
    return undefined;
  }

  /** Classifies the placeholders standing at offset `at`. */
  private classifyAt(at: number, context: () => ShellContext): void {
    const { positions, contexts } = this;
    // A placeholder that fell inside a token no scan method looks into cannot be escaped.
    while (this.next < positions.length && positions[this.next] < at) contexts[this.next++] = unsupported('inside a shell operator or keyword', 'separate the placeholder from the characters around it');
    while (this.next < positions.length && positions[this.next] === at) {
      this.numeric[this.next] = this.arithmeticReason();
      this.optionOf[this.next] = this.optionReader(at);
      const code = this.innermostCode();
      if (code) code.valuesInWord++;
      for (const f of this.stack) if (f.mode === 'code' && f.test) f.test.placeholders.push(this.next);
      contexts[this.next++] = context();
      this.wordBefore = true;
    }
  }

  private innermostCode(): CodeFrame | undefined {
    for (let n = this.stack.length - 1; n >= 0; n--) {
      const f = this.stack[n];
      if (f.mode === 'code') return f;
    }
    return undefined;
  }

  /**
   * The command that would read a value starting with "-" standing at `at` as an option: the value
   * starts one of its arguments (bare, or right inside the word's opening quotes), and no `--` came
   * before it. Not the command's own name, a redirection's target or a here-document's text.
   */
  private optionReader(at: number): string | undefined {
    const top = this.top();
    if (top.mode !== 'code' && top.mode !== 'single' && top.mode !== 'double' && top.mode !== 'ansi') return undefined;
    const frame = this.innermostCode();
    if (!frame || frame.command === undefined || NO_OPTIONS.has(frame.command) || frame.endOfOptions || frame.redirect || frame.valuesInWord > 0) return undefined;
    const startsWord = frame.current === '' ? !this.wordBefore : /^(\$?["'])+$/.test(this.text.slice(frame.wordStart, at));
    return startsWord ? frame.command : undefined;
  }

  /** Placeholders strictly inside a multi-character token cannot be escaped. */
  private refuseInside(from: number, to: number, reason: string, hint: string): void {
    for (let p = from + 1; p < to; p++) this.classifyAt(p, () => unsupported(reason, hint));
  }

  /** A word of a code frame ends: let, [[ and ]] change what follows. */
  private endWord(frame: CodeFrame, separator: string): void {
    const word = frame.current;
    const valueWord = word === '' && frame.valuesInWord > 0;
    frame.current = '';
    frame.valuesInWord = 0;
    if (valueWord) {
      // A command named by a value (`{program} -x {arg}`): what follows are its arguments all the same.
      if (frame.redirect) frame.redirect = false;
      else if (frame.command === undefined) frame.command = 'the program';
      else if (OPTIONS_FIRST.has(frame.command)) frame.endOfOptions = true;
    }
    if (word) {
      if (frame.redirect) frame.redirect = false;
      else if (frame.command === undefined) {
        if (!COMMAND_PREFIX.test(word)) frame.command = word;
      } else if (word === '--' || (OPTIONS_FIRST.has(frame.command) && !word.startsWith('-'))) frame.endOfOptions = true;
    }
    if (separator === '<' || separator === '>') frame.redirect = true;
    if (word === 'let') frame.letActive = true;
    else if (word === '[[') frame.test = { placeholders: [], text: '' };
    else if (word === ']]' && frame.test) {
      if (ARITHMETIC_TEST.test(frame.test.text)) for (const n of frame.test.placeholders) this.numeric[n] ??= 'in a [[ ]] test that compares numbers';
      frame.test = undefined;
    }
    if (/[;&|\n()]/.test(separator)) {
      frame.letActive = false;
      frame.command = undefined;
      frame.endOfOptions = false;
    }
  }

  /** Reads `\` and the character it escapes, where a value cannot follow it. */
  private skipEscape(i: number): number {
    this.classifyAt(i + 1, afterBackslash);
    return i + 2;
  }

  /** A quote or expansion closes: what follows continues the same word. */
  private close(i: number): number {
    this.stack.pop();
    this.wordBefore = true;
    return i + 1;
  }

  private scanSingle(i: number): number {
    if (this.text[i] === "'") this.stack.pop();
    this.wordBefore = true;
    return i + 1;
  }

  private scanComment(i: number): number {
    if (this.text[i] !== '\n') return i + 1;
    this.stack.pop();
    return i; // the code frame reads the newline (a here-document may start after it)
  }

  private scanAnsi(i: number): number {
    const c = this.text[i];
    if (c === '\\') return this.skipEscape(i);
    return c === "'" ? this.close(i) : i + 1;
  }

  /** Inside "..." or an unquoted here-document's body: expansions still run. */
  private scanDoubleQuoted(frame: Frame & { mode: 'double' | 'heredoc' }, i: number): number {
    const c = this.text[i];
    const d = this.text[i + 1];
    if (frame.mode === 'heredoc' && this.heredocs[frame.index].quoted) {
      if (c === '\n') frame.atLineStart = true;
      return i + 1;
    }
    if (c === '\\') {
      if (frame.mode === 'heredoc' && d === '\n') frame.atLineStart = true;
      return this.skipEscape(i);
    }
    if (c === '"' && frame.mode === 'double') return this.close(i);
    if (c === '\n' && frame.mode === 'heredoc') {
      frame.atLineStart = true;
      return i + 1;
    }
    return this.openExpansion(i, false) ?? i + 1;
  }

  /** Inside ${...}: nested braces, quotes and expansions. */
  private scanParam(frame: Frame & { mode: 'param' }, i: number): number {
    const c = this.text[i];
    if (c === '\\') return this.skipEscape(i);
    if (c === '}') {
      if (frame.depth === 0) return this.close(i);
      frame.depth--;
      return i + 1;
    }
    if (c === '{') frame.depth++;
    if (c === "'" || c === '"') {
      this.stack.push(c === "'" ? { mode: 'single' } : { mode: 'double' });
      return i + 1;
    }
    return this.openExpansion(i, false) ?? i + 1;
  }

  /** Unquoted shell code: words, quotes, comments, subshells and here-document starts. */
  private scanCode(frame: CodeFrame, i: number): number {
    const { text, stack } = this;
    const c = text[i];
    const d = text[i + 1];
    this.trackWords(frame, c, i);
    if (c === '(' && d === '(' && frame.current === '' && !this.wordBefore) {
      // ((...)): an arithmetic command, closed by its "))".
      stack.push(codeFrame(')', true, 1));
      return i + 2;
    }
    if (c === '\\') {
      if (d !== '\n') this.wordBefore = true; // a line continuation joins the word around it
      return this.skipEscape(i);
    }
    if (c === "'" || c === '"') {
      stack.push(c === "'" ? { mode: 'single' } : { mode: 'double' });
      return i + 1;
    }
    if (c === '#' && !this.wordBefore) {
      stack.push({ mode: 'comment' });
      return i + 1;
    }
    if (c === '`' && frame.close === '`') return this.close(i);
    if (c === '(') frame.depth++;
    if (c === ')') {
      if (frame.close === ')' && frame.depth === 0 && frame.caseDepth === 0) return this.close(i);
      if (frame.depth > 0) frame.depth--;
    }
    if (c === '<' && d === '<') {
      if (text[i + 2] === '<') {
        this.wordBefore = false;
        return i + 3;
      }
      this.wordBefore = true;
      return this.readHeredocStart(i);
    }
    if (c === '\n' && this.pending.length) {
      this.startHeredocs(i + 1);
      this.wordBefore = false;
      return i + 1;
    }
    const opened = this.openExpansion(i, true);
    if (opened !== undefined) return opened;
    this.wordBefore = !WORD_BREAK.test(c);
    return i + 1;
  }

  /** Keeps a code frame's words current: case/esac nesting, [[ ]] text, let and assignments. */
  private trackWords(frame: CodeFrame, c: string, at: number): void {
    if (/[A-Za-z0-9_]/.test(c)) frame.word += c;
    else {
      if (frame.word === 'case') frame.caseDepth++;
      else if (frame.word === 'esac' && frame.caseDepth > 0) frame.caseDepth--;
      frame.word = '';
    }
    if (frame.test) frame.test.text += c;
    if (WORD_BREAK.test(c)) this.endWord(frame, c);
    else if (c !== '\\') {
      if (frame.current === '') frame.wordStart = at;
      frame.current += c;
    }
  }

  /** `$(`, `${`, `$'`, `$"`, a backtick: pushes the frame and returns the next offset. */
  private openExpansion(at: number, inCode: boolean): number | undefined {
    const { text, stack } = this;
    const c = text[at];
    const d = text[at + 1];
    if (c === '`') {
      stack.push(codeFrame('`'));
      return at + 1;
    }
    if (c !== '$') return undefined;
    this.classifyAt(at + 1, () => unsupported('right after "$"', 'put a space or quote between "$" and the placeholder'));
    if (d === '(') stack.push(codeFrame(')', text[at + 2] === '('));
    else if (d === '{') stack.push({ mode: 'param', depth: 0 });
    else if (d === "'" && inCode && this.dialect === 'bash') stack.push({ mode: 'ansi' });
    else if (d === '"' && inCode && this.dialect === 'bash') stack.push({ mode: 'double' });
    else {
      this.wordBefore = true;
      return at + 1;
    }
    return at + 2;
  }

  /** Reads `<<[-]WORD` and queues the here-document; returns the offset after WORD. */
  private readHeredocStart(at: number): number {
    const { text } = this;
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
    this.refuseInside(at, j + 1, "in a here-document's delimiter", 'write the delimiter literally, e.g. <<EOF');
    // The delimiter was the redirection's target; the words after it are the command's again.
    const code = this.innermostCode();
    if (code) code.redirect = false;
    this.pending.push({ delimiter, quoted, stripTabs });
    return Math.min(j, text.length);
  }

  /** The line after `<<WORD` starts the queued here-documents' bodies. */
  private startHeredocs(bodyStart: number): void {
    // Several here-documents on one line follow each other; start the first,
    // and the rest as each one closes (they are pushed in reverse order).
    const docs = this.pending.splice(0);
    const indexes = docs.map((doc) => this.heredocs.push({ ...doc, bodyStart: -1, bodyEnd: -1 }) - 1);
    for (const index of [...indexes].reverse()) this.stack.push({ mode: 'heredoc', index, atLineStart: true });
    this.heredocs[indexes[0]].bodyStart = bodyStart;
  }

  /**
   * At the start of a here-document's line: if the line is its delimiter, the
   * body ends there; returns the offset to read next, or undefined if the
   * body goes on.
   */
  private closeHeredocAt(frame: Frame & { mode: 'heredoc' }, i: number): number | undefined {
    const { text, stack } = this;
    const doc = this.heredocs[frame.index];
    const newline = text.indexOf('\n', i);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(i, end);
    if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) !== doc.delimiter) return undefined;
    for (let p = i; p <= end; p++) this.classifyAt(p, () => unsupported("on a here-document's closing line", 'put the placeholder on a line of its own inside the here-document'));
    doc.bodyEnd = i;
    stack.pop();
    const following = this.top();
    if (following.mode === 'heredoc' && end < text.length) {
      // The next here-document of the same line starts after this one's closing line.
      this.heredocs[following.index].bodyStart = end + 1;
      return end + 1;
    }
    return end; // the code frame reads the newline
  }
}
