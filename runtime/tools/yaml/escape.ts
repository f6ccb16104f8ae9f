/**
 * Escaping that makes a value arrive as exactly itself, for each place a
 * placeholder can stand in a shell or Python script. The rules, in short:
 *
 *   shell, bare            'value'  (with ' written as '\'')
 *   shell, in '...'        close, insert, reopen: '\'' for each '
 *   shell, in "..."        "'value'" — leave the double quotes, single-quote, re-enter
 *   bash, in $'...'        ''value'$'
 *   here-document          \ $ ` escaped (quoted here-documents: as is)
 *   Python code            a Python literal ('...', 3, True, None, [...], {...})
 *   Python string          escaped in place (\\ \' \" \n \xNN \uNNNN, {{ }} in f-strings)
 *   Python raw string      closed, a plain literal, reopened: r'a' 'value' r'b'
 *   comments               newlines become spaces
 *
 * A value the target cannot hold (a NUL byte in a shell script, half of a
 * surrogate pair anywhere a process is given bytes) is refused.
 */
import type { PythonContext, PythonString } from './python-context.ts';
import type { ShellContext } from './shell-context.ts';
import { textOf } from './template.ts';
import { ForgeError } from '../../diagnostics.ts';
import { LONE_SURROGATE } from '../../lone-surrogate.ts';

/** A value refused for where it would go; the tool fails with this message. */
export class ValueRefused extends ForgeError {
  constructor(message: string) {
    super('FORGE_YAML_VALUE', message);
  }
}

/**
 * A value that starts an argument is read by most programs as an option when it starts with "-": `du -sh {path}`
 * with path "--files0-from=/etc/shadow", `git log {ref}` with ref "--output=/work/x", `echo {text}` with text
 * "-n". Escaping cannot help (the program, not the shell, reads it), so such a value is refused; numbers are
 * left alone (a negative number is a value, and no option of consequence is spelt as one). `words`: what the
 * value becomes there (the items of an array standing bare are arguments of their own).
 */
export function refuseOption(words: readonly unknown[], command: string): void {
  for (const word of words) {
    if (typeof word === 'number') continue;
    const item = textOf(word);
    if (!item.startsWith('-')) continue;
    const shown = item.length > 40 ? `${item.slice(0, 40)}…` : item;
    throw new ValueRefused(
      `starts with "-" (${JSON.stringify(shown)}), so ${command === 'the program' ? 'the program' : `"${command}"`} would read it as an option, not as a value; ` +
        'the tool can put -- before the placeholder (the end of options for most programs), ./ before a path, or write an option\'s value as --name={value}; or give the parameter a pattern that keeps such values out',
    );
  }
}

/** Words the shell reads as themselves: no quoting needed (keeps --show-command readable). */
const PLAIN_WORD = /^[A-Za-z0-9_./:@%+,-]+$/;

function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function shellWord(text: string, plainAllowed = true): string {
  return plainAllowed && PLAIN_WORD.test(text) ? text : singleQuoted(text);
}

/**
 * Refuses text a process cannot be given exactly: its arguments, environment and scripts are C
 * strings (no NUL) of bytes, and a string becomes them as UTF-8, in which half of a surrogate pair
 * (JSON.parse makes one of "\ud800") has no form: Node would pass U+FFFD instead.
 */
export function refuseUnholdable(text: string, subject: string, target: string): void {
  const problem = text.includes('\0') ? 'a NUL character' : LONE_SURROGATE.test(text) ? 'half of a surrogate pair (no UTF-8 form)' : undefined;
  if (problem) throw new ValueRefused(`${subject} contains ${problem}, which ${target} cannot hold`);
}

/**
 * `plainAllowed: false` forces quotes where an unquoted word would merge
 * with what stands before it ($NAME{X} would name another variable).
 */
export function escapeForShell(context: Exclude<ShellContext, { kind: 'unsupported' }>, value: unknown, plainAllowed = true): string {
  if (context.kind === 'bare' && Array.isArray(value)) {
    return value.map((item) => escapeForShell(context, item, plainAllowed)).join(' ');
  }
  const text = textOf(value);
  refuseUnholdable(text, 'a value', 'a shell script');
  switch (context.kind) {
    case 'bare':
      return shellWord(text, plainAllowed);
    case 'single':
      return text.replace(/'/g, `'\\''`);
    case 'double':
      return plainAllowed && PLAIN_WORD.test(text) ? text : `"${singleQuoted(text)}"`;
    case 'ansi':
      return `'${singleQuoted(text)}$'`;
    case 'comment':
      return text.replace(/[\r\n]/g, ' ');
    case 'heredoc':
      return context.quoted ? text : text.replace(/[\\$`]/g, '\\$&');
  }
}

export function escapeForPython(context: Exclude<PythonContext, { kind: 'unsupported' }>, value: unknown): string {
  switch (context.kind) {
    case 'code':
      return pythonLiteral(value);
    case 'comment':
      return textOf(value).replace(/[\r\n]/g, ' ');
    case 'string':
      return context.raw ? reopenRawString(context, textOf(value)) : escapeInPythonString(textOf(value), context);
  }
}

/** A raw string cannot escape anything: close it, add a plain literal (adjacent literals join), reopen it. */
function reopenRawString(string: PythonString, text: string): string {
  const literal = `${string.bytes ? 'b' : ''}'${escapeInPythonString(text, { bytes: string.bytes, format: false })}'`;
  return `${string.quote} ${literal} ${string.prefix}${string.quote}`;
}

function escapeInPythonString(text: string, string: { bytes: boolean; format: boolean }): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '{':
      case '}':
        out += string.format ? ch + ch : ch;
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x80) out += ch;
    else if (string.bytes) for (const byte of Buffer.from(ch, 'utf8')) out += `\\x${hex(byte, 2)}`;
    else out += cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
  }
  return out;
}

/** A JSON value as Python source. */
function pythonLiteral(value: unknown): string {
  if (value === undefined || value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    const text = Number.isFinite(value) ? String(value) : 'None';
    return value < 0 ? `(${text})` : text;
  }
  if (typeof value === 'string') return `'${escapeInPythonString(value, { bytes: false, format: false })}'`;
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pythonLiteral(k)}: ${pythonLiteral(v)}`)
      .join(', ')}}`;
  }
  return pythonLiteral(String(value));
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
