/**
 * `when:` conditions: a small expression language over parameters and the
 * results of earlier steps, parsed when the tool loads and never evaluated
 * as code.
 *
 *   {mode} == 'fast' && {count} > 2
 *   !{dry_run} || {check.exit-code} != 0
 *   {files} contains 'README.md'
 *
 * Operands: placeholders (with their types), 'strings', "strings", numbers,
 * true, false, null. Operators: == != < <= > >= contains ! && || (and the
 * words not, and, or), and parentheses. Numbers (and text that reads as a
 * number) compare as numbers, anything else compares as text.
 */
import { textOf, type Reference, type Resolve, type Template, type TemplateProblem } from './template.ts';
import { ownValue } from '../../own-value.ts';

export type Condition =
  | { op: 'value'; value: unknown }
  | { op: 'ref'; ref: Reference }
  | { op: 'not'; operand: Condition }
  | { op: 'and' | 'or'; left: Condition; right: Condition }
  | { op: '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains'; left: Condition; right: Condition };

type Token = { kind: 'op' | 'value' | 'ref'; text: string; value?: unknown; ref?: Reference; offset: number };

const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')'];
const WORDS: Record<string, string> = { and: '&&', or: '||', not: '!', contains: 'contains' };

function tokenize(template: Template): { tokens: Token[]; problem?: TemplateProblem } {
  const tokens: Token[] = [];
  // Offsets are approximate inside text that had {{ }} collapsed; good enough to point at the condition.
  let offset = 0;
  for (const segment of template.segments) {
    if (segment.kind === 'ref') {
      tokens.push({ kind: 'ref', text: `{${segment.ref.text}}`, ref: segment.ref, offset: segment.offset });
      offset = segment.offset + segment.length;
      continue;
    }
    if (segment.kind === 'env') return { tokens, problem: { message: '${...} cannot be used in a condition', offset: segment.offset } };
    const s = segment.text;
    let i = 0;
    while (i < s.length) {
      const c = s[i];
      if (/\s/.test(c)) {
        i++;
        continue;
      }
      const at = offset + i;
      if (c === "'" || c === '"') {
        const close = s.indexOf(c, i + 1);
        if (close < 0) return { tokens, problem: { message: 'unclosed string in the condition', offset: at, hint: `close it with ${c}` } };
        tokens.push({ kind: 'value', text: s.slice(i, close + 1), value: s.slice(i + 1, close), offset: at });
        i = close + 1;
        continue;
      }
      const number = /^-?\d+(\.\d+)?/.exec(s.slice(i));
      if (number) {
        tokens.push({ kind: 'value', text: number[0], value: Number(number[0]), offset: at });
        i += number[0].length;
        continue;
      }
      const word = /^[A-Za-z_]+/.exec(s.slice(i));
      if (word) {
        const w = word[0];
        const keyword = ownValue(WORDS, w);
        if (keyword !== undefined) tokens.push({ kind: 'op', text: keyword, offset: at });
        else if (w === 'true' || w === 'false') tokens.push({ kind: 'value', text: w, value: w === 'true', offset: at });
        else if (w === 'null') tokens.push({ kind: 'value', text: w, value: null, offset: at });
        else return { tokens, problem: { message: `unknown word "${w}" in the condition`, offset: at, hint: `write a placeholder {${w}}, or quote text: '${w}'` } };
        i += w.length;
        continue;
      }
      const op = OPERATORS.find((o) => s.startsWith(o, i));
      if (!op) return { tokens, problem: { message: `unexpected "${c}" in the condition`, offset: at, hint: 'operators: == != < <= > >= contains ! && || ( )' } };
      tokens.push({ kind: 'op', text: op, offset: at });
      i += op.length;
    }
    offset += s.length;
  }
  return { tokens };
}

export function parseCondition(template: Template): { condition?: Condition; problems: TemplateProblem[] } {
  const { tokens, problem } = tokenize(template);
  if (problem) return { problems: [problem] };
  let pos = 0;
  const peek = () => tokens[pos];
  const fail = (message: string, token = peek()): never => {
    throw { message, offset: token?.offset ?? template.source.length } satisfies TemplateProblem;
  };
  const isOp = (text: string) => peek()?.kind === 'op' && peek()!.text === text;

  const primary = (): Condition => {
    const token = peek();
    if (!token) return fail('the condition ends too early');
    if (isOp('(')) {
      pos++;
      const inner = or();
      if (!isOp(')')) fail('missing ")"');
      pos++;
      return inner;
    }
    if (isOp('!')) {
      pos++;
      return { op: 'not', operand: primary() };
    }
    pos++;
    if (token.kind === 'ref') return { op: 'ref', ref: token.ref! };
    if (token.kind === 'value') return { op: 'value', value: token.value };
    return fail(`unexpected "${token.text}"`, token);
  };
  const comparison = (): Condition => {
    const left = primary();
    const token = peek();
    if (token?.kind === 'op' && ['==', '!=', '<', '<=', '>', '>=', 'contains'].includes(token.text)) {
      pos++;
      return { op: token.text as '==', left, right: primary() };
    }
    return left;
  };
  const and = (): Condition => {
    let left = comparison();
    while (isOp('&&')) {
      pos++;
      left = { op: 'and', left, right: comparison() };
    }
    return left;
  };
  const or = (): Condition => {
    let left = and();
    while (isOp('||')) {
      pos++;
      left = { op: 'or', left, right: and() };
    }
    return left;
  };

  try {
    const condition = or();
    if (pos < tokens.length) fail(`unexpected "${peek()!.text}"`);
    return { condition, problems: [] };
  } catch (err) {
    if (err && typeof err === 'object' && 'offset' in err) return { problems: [err as TemplateProblem] };
    throw err;
  }
}

export function conditionReferences(condition: Condition): Reference[] {
  switch (condition.op) {
    case 'ref':
      return [condition.ref];
    case 'value':
      return [];
    case 'not':
      return conditionReferences(condition.operand);
    default:
      return [...conditionReferences(condition.left), ...conditionReferences(condition.right)];
  }
}

export function evaluate(condition: Condition, resolve: Resolve): unknown {
  switch (condition.op) {
    case 'value':
      return condition.value;
    case 'ref':
      return resolve(condition.ref);
    case 'not':
      return !truthy(evaluate(condition.operand, resolve));
    case 'and':
      return truthy(evaluate(condition.left, resolve)) && truthy(evaluate(condition.right, resolve));
    case 'or':
      return truthy(evaluate(condition.left, resolve)) || truthy(evaluate(condition.right, resolve));
    case 'contains': {
      const haystack = evaluate(condition.left, resolve);
      const needle = evaluate(condition.right, resolve);
      if (Array.isArray(haystack)) return haystack.some((item) => textOf(item) === textOf(needle));
      return textOf(haystack).includes(textOf(needle));
    }
    default: {
      const left = evaluate(condition.left, resolve);
      const right = evaluate(condition.right, resolve);
      const a = asNumber(left);
      const b = asNumber(right);
      const [x, y] = a !== undefined && b !== undefined ? [a, b] : [textOf(left), textOf(right)];
      switch (condition.op) {
        case '==':
          return x === y;
        case '!=':
          return x !== y;
        case '<':
          return x < y;
        case '<=':
          return x <= y;
        case '>':
          return x > y;
        case '>=':
          return x >= y;
      }
    }
  }
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** Empty, zero, false, "false", "0", null and [] are false; everything else is true. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (typeof value === 'string') return !/^(false|0)$/i.test(value.trim());
  if (Array.isArray(value)) return value.length > 0;
  return true;
}
