/**
 * Where each placeholder stands in a Python script: in code (it becomes a
 * Python literal), inside a string literal (escaped for that kind of
 * string), or in a comment. Placeholders inside an f-string's expression
 * or format spec, or right after a backslash or a name, are refused when
 * the tool is loaded: no escaping there can be trusted on every Python.
 */

export interface PythonString {
  /** The closing quote: ' " ''' or """. */
  quote: string;
  /** The prefix as written (r, b, f, rb...), to reopen a raw string. */
  prefix: string;
  raw: boolean;
  bytes: boolean;
  format: boolean;
}

export type PythonContext =
  | { kind: 'code' }
  | ({ kind: 'string' } & PythonString)
  | { kind: 'comment' }
  | { kind: 'unsupported'; reason: string; hint: string };

type Frame =
  | { mode: 'code'; fieldOf?: PythonString; depth: number; spec: boolean }
  | ({ mode: 'string' } & PythonString)
  | { mode: 'comment' };

const PREFIXES = new Set(['r', 'u', 'b', 'f', 'br', 'rb', 'fr', 'rf']);
const NAME_CHAR = /[A-Za-z0-9_\u0080-\uffff]/;

export function analyzePython(text: string, positions: readonly number[]): PythonContext[] {
  const contexts: PythonContext[] = [];
  const stack: Frame[] = [{ mode: 'code', depth: 0, spec: false }];
  let next = 0;
  let afterName = false;

  const top = () => stack[stack.length - 1];
  const unsupported = (reason: string, hint: string): PythonContext => ({ kind: 'unsupported', reason, hint });
  const current = (): PythonContext => {
    const f = top();
    if (stack.some((s) => s.mode === 'code' && s.fieldOf)) {
      return unsupported("inside an f-string's {...}", 'assign the placeholder to a variable before the f-string and use the variable in it');
    }
    if (f.mode === 'code') {
      if (afterName) return unsupported('right after a name or number', 'put an operator or a space between them');
      return { kind: 'code' };
    }
    if (f.mode === 'comment') return { kind: 'comment' };
    const { mode: _mode, ...string } = f;
    return { kind: 'string', ...string };
  };
  const classifyAt = (at: number, context: () => PythonContext) => {
    while (next < positions.length && positions[next] < at) contexts[next++] = unsupported('inside a Python token', 'separate the placeholder from the characters around it');
    while (next < positions.length && positions[next] === at) contexts[next++] = context();
  };
  const afterBackslash = () => unsupported('right after a backslash', 'remove the backslash: the value is escaped for you');

  let i = 0;
  while (i <= text.length) {
    classifyAt(i, current);
    if (i === text.length) break;
    const frame = top();
    const c = text[i];

    if (frame.mode === 'comment') {
      if (c === '\n') stack.pop();
      i++;
      continue;
    }

    if (frame.mode === 'string') {
      if (c === '\\') {
        classifyAt(i + 1, afterBackslash);
        i += 2;
        continue;
      }
      if (text.startsWith(frame.quote, i)) {
        stack.pop();
        i += frame.quote.length;
        afterName = false;
        continue;
      }
      if (frame.format && (c === '{' || c === '}')) {
        if (text[i + 1] === c) {
          classifyAt(i + 1, () => unsupported('between doubled braces', 'move the placeholder out of the braces'));
          i += 2;
          continue;
        }
        if (c === '{') {
          const { mode: _mode, ...string } = frame;
          stack.push({ mode: 'code', fieldOf: string, depth: 0, spec: false });
        }
        i++;
        continue;
      }
      i++;
      continue;
    }

    // Code, or an f-string's replacement field.
    if (frame.fieldOf) {
      if (frame.spec) {
        if (c === '{') stack.push({ mode: 'code', fieldOf: frame.fieldOf, depth: 0, spec: false });
        else if (c === '}') stack.pop();
        i++;
        continue;
      }
      if (frame.depth === 0 && c === '}') {
        stack.pop();
        i++;
        continue;
      }
      if (frame.depth === 0 && (c === ':' || (c === '!' && text[i + 1] !== '='))) {
        frame.spec = true;
        i++;
        continue;
      }
    }
    if (c === '#') {
      stack.push({ mode: 'comment' });
      i++;
      continue;
    }
    if (c === '\\') {
      classifyAt(i + 1, afterBackslash);
      i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      openString('', i);
      continue;
    }
    if (NAME_CHAR.test(c)) {
      let j = i;
      while (j < text.length && NAME_CHAR.test(text[j])) j++;
      const name = text.slice(i, j);
      for (let p = i + 1; p < j; p++) classifyAt(p, () => unsupported('inside a name or number', 'put an operator or a space between them'));
      if (PREFIXES.has(name.toLowerCase()) && (text[j] === "'" || text[j] === '"')) {
        classifyAt(j, () => unsupported('between a string prefix and its quote', 'put the placeholder inside the string'));
        openString(name, j);
        continue;
      }
      i = j;
      afterName = true;
      continue;
    }
    if ('([{'.includes(c)) frame.depth++;
    else if (')]}'.includes(c) && frame.depth > 0) frame.depth--;
    afterName = false;
    i++;
  }
  return contexts;

  function openString(prefix: string, at: number) {
    const q = text[at];
    const triple = text.startsWith(q.repeat(3), at);
    const lower = prefix.toLowerCase();
    stack.push({ mode: 'string', quote: triple ? q.repeat(3) : q, prefix, raw: lower.includes('r'), bytes: lower.includes('b'), format: lower.includes('f') });
    i = at + (triple ? 3 : 1);
    afterName = false;
  }
}
