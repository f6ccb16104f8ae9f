/**
 * `run:` and `shell:` commands: a process and its arguments, no shell. A
 * command written as one string is split into words once, when the tool
 * loads ('...' and "..." group words, a backslash escapes), with each
 * placeholder inside its word — so a value is always exactly one argument,
 * whatever spaces or quotes it holds.
 */
import { basename } from 'node:path';
import { refuseOption, refuseUnholdable, ValueRefused } from './escape.ts';
import { OPTIONS_FIRST } from './shell-context.ts';
import { renderText, type Reference, type Resolve, type Segment, type Template, type TemplateProblem } from './template.ts';

export function splitCommand(template: Template): { words: Template[]; problems: TemplateProblem[] } {
  const words: Template[] = [];
  const problems: TemplateProblem[] = [];
  let segments: Segment[] = [];
  let text = '';
  let started = false;
  let quote: "'" | '"' | undefined;
  let quoteAt = 0;
  const endText = () => {
    if (text) segments.push({ kind: 'text', text });
    text = '';
  };
  const endWord = () => {
    endText();
    if (started) words.push({ source: template.source, segments });
    segments = [];
    started = false;
  };
  for (const segment of template.segments) {
    if (segment.kind !== 'text') {
      endText();
      segments.push(segment);
      started = true;
      continue;
    }
    const s = segment.text;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (quote) {
        if (c === quote) quote = undefined;
        else if (c === '\\' && quote === '"' && (s[i + 1] === '"' || s[i + 1] === '\\')) text += s[++i];
        else text += c;
        continue;
      }
      if (/\s/.test(c)) {
        endWord();
        continue;
      }
      started = true;
      if (c === "'" || c === '"') {
        quote = c;
        quoteAt = i;
      } else if (c === '\\' && i + 1 < s.length) text += s[++i];
      else text += c;
    }
  }
  if (quote) problems.push({ message: `unclosed ${quote === "'" ? 'single' : 'double'} quote in the command`, offset: quoteAt, hint: `close it with ${quote}` });
  endWord();
  if (words.length === 0) problems.push({ message: 'the command is empty', offset: 0, hint: 'name the program to run, e.g. run: git status' });
  return { words, problems };
}

/**
 * The arguments for one call. A value that starts an argument (after the program, before any `--` or, for
 * printf and echo, their first operand) must not start with "-" (see refuseOption), unless the tool's author
 * wrote it (`authored`: a boolean's `flag:`).
 */
export function renderArgv(words: readonly Template[], resolve: Resolve, authored?: (ref: Reference) => boolean): string[] {
  let program = 'the program';
  let operands = false;
  return words.map((word, index) => {
    const first = word.segments[0];
    let render = resolve;
    if (index > 0 && !operands && first?.kind === 'ref' && !first.raw && !authored?.(first.ref)) {
      // Resolved once: a composition's budget counts every value resolved.
      const value = resolve(first.ref);
      try {
        refuseOption([value], program);
      } catch (err) {
        throw new ValueRefused(`the value of {${first.ref.text}} ${(err as Error).message}`);
      }
      render = (ref) => (ref === first.ref ? value : resolve(ref));
    }
    const arg = renderText(word, render);
    refuseUnholdable(arg, 'a value', 'a process argument');
    if (index === 0) program = basename(arg) || program;
    else if (arg === '--' || (OPTIONS_FIRST.has(program) && !arg.startsWith('-'))) operands = true;
    return arg;
  });
}
