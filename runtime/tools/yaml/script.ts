/**
 * An inline script with placeholders (bash:, sh:, python:, script:),
 * compiled once when the tool loads: every placeholder's context is found
 * and checked then, so rendering a call only escapes and joins.
 */
import { escapeForPython, escapeForShell, refuseOption, ValueRefused } from './escape.ts';
import { analyzePython, type PythonContext } from './python-context.ts';
import { analyzeShell, type Heredoc, type ShellContext } from './shell-context.ts';
import { literalSkeleton, references, textOf, type Reference, type Resolve, type Template, type TemplateProblem } from './template.ts';

export type ScriptLanguage = 'bash' | 'sh' | 'python';

export interface CompiledScript {
  language: ScriptLanguage;
  template: Template;
  /** The script's literal text with the placeholders taken out. */
  skeleton: string;
  positions: number[];
  contexts: (ShellContext | PythonContext)[];
  heredocs: Heredoc[];
  /** Per placeholder: an unquoted word would run into the text before it ($NAME{X}, ~{X}). */
  mustQuote: boolean[];
  /** Per placeholder: why only a whole number may stand there (bash evaluates it as arithmetic). */
  numeric: (string | undefined)[];
  /** The script evaluates text as arithmetic somewhere, so no value may carry an array subscript with an expansion. */
  evaluatesArithmetic: boolean;
  /** Per placeholder: the command that would read a value starting with "-" there as an option. */
  optionOf: (string | undefined)[];
}

/**
 * Constructs where bash evaluates a variable's text as arithmetic — and so
 * runs the command substitution of an array subscript inside it.
 */
const ARITHMETIC_CONSTRUCTS = /\(\(|\blet\s|\b(declare|typeset|local|export|readonly)\s+-[A-Za-z]*i|\[\[[^\]]*\s-(eq|ne|lt|le|gt|ge|v)\s|\$\{[A-Za-z_][A-Za-z0-9_]*(\[|:[^-=?+])|[A-Za-z_][A-Za-z0-9_]*\[[^\]]*\]\+?=/;

export function compileScript(template: Template, language: ScriptLanguage): { script: CompiledScript; problems: TemplateProblem[] } {
  const { text, positions } = literalSkeleton(template);
  let contexts: (ShellContext | PythonContext)[];
  let heredocs: Heredoc[] = [];
  let numeric: (string | undefined)[] = [];
  let optionOf: (string | undefined)[] = [];
  if (language === 'python') contexts = analyzePython(text, positions);
  else ({ contexts, heredocs, numeric, optionOf } = analyzeShell(text, positions, language === 'bash' ? 'bash' : 'posix'));

  const refs = references(template);
  const problems: TemplateProblem[] = [];
  refs.forEach((segment, n) => {
    const context = contexts[n];
    if (segment.raw || context.kind !== 'unsupported') return;
    problems.push({
      message: `placeholder {${segment.ref.text}} stands ${context.reason}, where no escaping keeps its value literal`,
      offset: segment.offset,
      hint: context.hint,
    });
  });
  const mustQuote = positions.map((p) => /(\$[A-Za-z_][A-Za-z0-9_]*|[$~])$/.test(text.slice(Math.max(0, p - 64), p)));
  const evaluatesArithmetic = language !== 'python' && ARITHMETIC_CONSTRUCTS.test(text);
  return { script: { language, template, skeleton: text, positions, contexts, heredocs, mustQuote, numeric, evaluatesArithmetic, optionOf }, problems };
}

/**
 * The script with every value escaped for where it stands. Throws ValueRefused for a value that cannot go there.
 * `authored`: placeholders whose text the tool's author wrote (a boolean parameter's `flag:`), which may be options.
 */
export function renderScript(script: CompiledScript, resolve: Resolve, authored?: (ref: Reference) => boolean): string {
  return renderScriptLines(script, resolve, authored).text;
}

/**
 * renderScript, and for each line of the text the line of the template it
 * comes from (`lines[n - 1]` for line n): a value with newlines in it adds
 * lines, which all come from the line its placeholder is on.
 */
export function renderScriptLines(script: CompiledScript, resolve: Resolve, authored?: (ref: Reference) => boolean): { text: string; lines: number[] } {
  const refs = references(script.template);
  const inserted: string[] = refs.map((segment, n) => {
    const value = resolve(segment.ref);
    if (segment.raw) return textOf(value);
    const context = script.contexts[n];
    try {
      if (context.kind === 'unsupported') throw new ValueRefused(`cannot be inserted ${context.reason}`);
      checkArithmetic(script, n, value);
      const reader = script.optionOf[n];
      if (reader && !authored?.(segment.ref)) refuseOption(context.kind === 'bare' && Array.isArray(value) ? value : [value], reader);
      return script.language === 'python'
        ? escapeForPython(context as Exclude<PythonContext, { kind: 'unsupported' }>, value)
        : escapeForShell(context as Exclude<ShellContext, { kind: 'unsupported' }>, value, !script.mustQuote[n]);
    } catch (err) {
      if (err instanceof ValueRefused) throw new ValueRefused(`the value of {${segment.ref.text}} ${err.message}`);
      throw err;
    }
  });

  const out = joinScript(script, inserted);
  checkHeredocs(script, inserted, out);
  return { text: out, lines: lineOrigins(script, inserted) };
}

/** The template line of each rendered line (the skeleton has the template's newlines: a placeholder holds none). */
function lineOrigins(script: CompiledScript, inserted: string[]): number[] {
  const lines = [1];
  let line = 1;
  const literal = (text: string) => {
    for (const c of text) if (c === '\n') lines.push(++line);
  };
  let from = 0;
  script.positions.forEach((p, n) => {
    literal(script.skeleton.slice(from, p));
    for (const c of inserted[n]) if (c === '\n') lines.push(line);
    from = p;
  });
  literal(script.skeleton.slice(from));
  return lines;
}

/** Where bash evaluates text as arithmetic, a value could run a command (a[$(id)]): numbers only there, and no such subscripts anywhere. */
function checkArithmetic(script: CompiledScript, n: number, value: unknown) {
  const text = textOf(value);
  const reason = script.numeric[n];
  if (reason && !/^-?\d+$/.test(text)) throw new ValueRefused(`must be a whole number: it stands ${reason}, where bash evaluates text as arithmetic`);
  if (script.evaluatesArithmetic && /\[/.test(text) && /[$`]/.test(text)) {
    throw new ValueRefused('holds "[" with "$" or "`", which could run a command where this script evaluates text as arithmetic');
  }
}

/** A value must not contain the line that would end its here-document early (and run the rest as commands). */
function checkHeredocs(script: CompiledScript, inserted: string[], rendered: string) {
  if (script.heredocs.length === 0) return;
  const shift = (offset: number) => {
    let extra = 0;
    script.positions.forEach((p, n) => {
      if (p < offset) extra += inserted[n].length;
    });
    return offset + extra;
  };
  for (const doc of script.heredocs) {
    const holdsPlaceholder = script.positions.some((p) => p >= doc.bodyStart && p < doc.bodyEnd);
    if (!holdsPlaceholder) continue;
    const body = rendered.slice(shift(doc.bodyStart), shift(doc.bodyEnd));
    for (const line of body.split('\n')) {
      if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
        throw new ValueRefused(`a value puts the line "${doc.delimiter}" inside a here-document, where it would end the document early`);
      }
    }
  }
}

function joinScript(script: CompiledScript, inserted: string[]): string {
  let out = '';
  let from = 0;
  script.positions.forEach((p, n) => {
    out += script.skeleton.slice(from, p) + inserted[n];
    from = p;
  });
  return out + script.skeleton.slice(from);
}
