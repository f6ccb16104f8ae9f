/**
 * Arithmetic expressions, parsed and evaluated without eval: a tokenizer and
 * a precedence-climbing (Pratt) parser, evaluated as it parses. Every error
 * carries the 1-based column of the token it is about.
 *
 * Precedence, loosest first: + - ; * / % ; unary + - ; ^ ** (right to left),
 * so -2^2 = -4 and 2^3^2 = 512, as in mathematics.
 */
import { closestMatch } from '../../../suggest.ts';
import { ownValue } from '../../../own-value.ts';

export class ExpressionError extends Error {
  constructor(
    message: string,
    /** 1-based column in the expression. */
    readonly column: number,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

type Token = { kind: 'number'; value: number; column: number } | { kind: 'name'; value: string; column: number } | { kind: 'op'; value: string; column: number } | { kind: 'end'; column: number };

export const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI, phi: (1 + Math.sqrt(5)) / 2 };

interface MathFunction {
  arity: [min: number, max: number];
  apply(args: number[], column: number): number;
}

const unary = (f: (x: number) => number): MathFunction => ({ arity: [1, 1], apply: ([x]) => f(x) });
const domain = (f: (x: number) => number, ok: (x: number) => boolean, what: string): MathFunction => ({
  arity: [1, 1],
  apply: ([x], column) => {
    if (!ok(x)) throw new ExpressionError(`${what} (got ${x})`, column);
    return f(x);
  },
});

export const FUNCTIONS: Record<string, MathFunction> = {
  sqrt: domain(Math.sqrt, (x) => x >= 0, 'sqrt of a negative number'),
  cbrt: unary(Math.cbrt),
  abs: unary(Math.abs),
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  trunc: unary(Math.trunc),
  sign: unary(Math.sign),
  exp: unary(Math.exp),
  ln: domain(Math.log, (x) => x > 0, 'ln of a number that is not positive'),
  log10: domain(Math.log10, (x) => x > 0, 'log10 of a number that is not positive'),
  log2: domain(Math.log2, (x) => x > 0, 'log2 of a number that is not positive'),
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
  asin: domain(Math.asin, (x) => x >= -1 && x <= 1, 'asin needs a number from -1 to 1'),
  acos: domain(Math.acos, (x) => x >= -1 && x <= 1, 'acos needs a number from -1 to 1'),
  atan: unary(Math.atan),
  atan2: { arity: [2, 2], apply: ([y, x]) => Math.atan2(y, x) },
  pow: { arity: [2, 2], apply: ([x, y], column) => power(x, y, column) },
  min: { arity: [1, Infinity], apply: (xs) => Math.min(...xs) },
  max: { arity: [1, Infinity], apply: (xs) => Math.max(...xs) },
  hypot: { arity: [1, Infinity], apply: (xs) => Math.hypot(...xs) },
  /** round(x) to an integer, round(x, n) to n decimals; halves round away from zero. */
  round: {
    arity: [1, 2],
    apply: ([x, digits = 0], column) => {
      if (!Number.isInteger(digits) || digits < 0 || digits > 15) throw new ExpressionError(`round's second argument must be a whole number of decimals from 0 to 15 (got ${digits})`, column);
      const factor = 10 ** digits;
      return (Math.sign(x) * Math.round(Math.abs(x) * factor + Number.EPSILON)) / factor;
    },
  },
  /** log(x) is the natural logarithm; log(x, b) the logarithm to base b. */
  log: {
    arity: [1, 2],
    apply: ([x, base], column) => {
      if (x <= 0) throw new ExpressionError(`log of a number that is not positive (got ${x})`, column);
      if (base === undefined) return Math.log(x);
      if (base <= 0 || base === 1) throw new ExpressionError(`log base must be positive and not 1 (got ${base})`, column);
      return Math.log(x) / Math.log(base);
    },
  },
};

const MAX_LENGTH = 2000;
const MAX_DEPTH = 200;

export function evaluate(expression: string): number {
  if (expression.length > MAX_LENGTH) throw new ExpressionError(`the expression is ${expression.length} characters long; the limit is ${MAX_LENGTH}`, MAX_LENGTH + 1);
  const parser = new Parser(tokenize(expression));
  const value = parser.expression(0, 0);
  parser.expectEnd();
  return value;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const column = i + 1;
    if (/\s/.test(ch)) {
      i++;
    } else if (/[0-9.]/.test(ch)) {
      const match = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!match) throw new ExpressionError(`malformed number at column ${column}`, column);
      if (/^[eE]/.test(text.slice(i + match[0].length)) || text[i + match[0].length] === '.') {
        throw new ExpressionError(`malformed number at column ${column}`, column, 'write numbers like 12, 3.5, .5 or 1e-3');
      }
      tokens.push({ kind: 'number', value: Number(match[0]), column });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(ch)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: 'name', value: name, column });
      i += name.length;
    } else if (text.startsWith('**', i)) {
      tokens.push({ kind: 'op', value: '^', column });
      i += 2;
    } else if ('+-*/%^(),'.includes(ch)) {
      tokens.push({ kind: 'op', value: ch, column });
      i++;
    } else if (ch === '×' || ch === '÷' || ch === '−') {
      tokens.push({ kind: 'op', value: ch === '×' ? '*' : ch === '÷' ? '/' : '-', column });
      i++;
    } else {
      throw new ExpressionError(`unexpected character "${ch}" at column ${column}`, column, 'use numbers, + - * / % ^, parentheses, functions and constants');
    }
  }
  tokens.push({ kind: 'end', column: text.length + 1 });
  return tokens;
}

const BINARY: Record<string, { power: number; right?: boolean }> = {
  '+': { power: 10 },
  '-': { power: 10 },
  '*': { power: 20 },
  '/': { power: 20 },
  '%': { power: 20 },
  '^': { power: 40, right: true },
};
const PREFIX_POWER = 30;

class Parser {
  private at = 0;

  constructor(private readonly tokens: Token[]) {}

  /** Parses operators that bind tighter than `minPower`. */
  expression(minPower: number, depth: number): number {
    if (depth > MAX_DEPTH) throw new ExpressionError('the expression is nested too deeply', this.peek().column);
    let left = this.operand(depth);
    for (;;) {
      const token = this.peek();
      if (token.kind === 'number' || token.kind === 'name' || (token.kind === 'op' && token.value === '(')) {
        throw new ExpressionError(`missing operator before ${describe(token)} at column ${token.column}`, token.column, 'write multiplication explicitly, e.g. 2*x or 2*(1+3)');
      }
      if (token.kind !== 'op' || !BINARY[token.value]) return left;
      const { power: p, right } = BINARY[token.value];
      if (p <= minPower) return left;
      this.at++;
      const rightValue = this.expression(right ? p - 1 : p, depth + 1);
      left = applyBinary(token.value, left, rightValue, token.column);
    }
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end') throw new ExpressionError(`unexpected ${describe(token)} at column ${token.column}`, token.column);
  }

  private operand(depth: number): number {
    const token = this.next();
    if (token.kind === 'number') return token.value;
    if (token.kind === 'op' && (token.value === '-' || token.value === '+')) {
      const value = this.expression(PREFIX_POWER, depth + 1);
      return token.value === '-' ? -value : value;
    }
    if (token.kind === 'op' && token.value === '(') {
      const value = this.expression(0, depth + 1);
      this.expect(')', token);
      return value;
    }
    if (token.kind === 'name') return this.name(token, depth);
    if (token.kind === 'end') throw new ExpressionError(token.column === 1 ? 'the expression is empty' : `the expression ends early at column ${token.column}: a number, a name or "(" is missing`, token.column);
    throw new ExpressionError(`unexpected ${describe(token)} at column ${token.column}`, token.column);
  }

  private name(token: Extract<Token, { kind: 'name' }>, depth: number): number {
    const lower = token.value.toLowerCase();
    // Own names only: "constructor" and "__proto__" are Object.prototype's, not the calculator's.
    const fn = ownValue(FUNCTIONS, lower);
    if (this.peek().kind === 'op' && (this.peek() as { value: string }).value === '(') {
      if (!fn) {
        const near = closestMatch(lower, Object.keys(FUNCTIONS));
        throw new ExpressionError(`unknown function "${token.value}" at column ${token.column}`, token.column, near ? `did you mean "${near}"?` : `functions: ${Object.keys(FUNCTIONS).join(', ')}`);
      }
      const open = this.next();
      const args: number[] = [];
      if (!(this.peek().kind === 'op' && (this.peek() as { value: string }).value === ')')) {
        for (;;) {
          args.push(this.expression(0, depth + 1));
          const separator = this.peek();
          if (separator.kind === 'op' && separator.value === ',') {
            this.at++;
            continue;
          }
          break;
        }
      }
      this.expect(')', open);
      const [min, max] = fn.arity;
      if (args.length < min || args.length > max) {
        const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} or ${max}`;
        throw new ExpressionError(`${lower}() takes ${wanted} argument${min === 1 && max === 1 ? '' : 's'}, got ${args.length} (column ${token.column})`, token.column);
      }
      return fn.apply(args, token.column);
    }
    const constant = ownValue(CONSTANTS, lower);
    if (constant !== undefined) return constant;
    if (fn) throw new ExpressionError(`${lower} is a function: call it as ${lower}(...) (column ${token.column})`, token.column);
    const near = closestMatch(lower, [...Object.keys(CONSTANTS), ...Object.keys(FUNCTIONS)]);
    throw new ExpressionError(`unknown name "${token.value}" at column ${token.column}`, token.column, near ? `did you mean "${near}"?` : `constants: ${Object.keys(CONSTANTS).join(', ')}`);
  }

  private expect(value: string, opening: Token): void {
    const token = this.peek();
    if (token.kind === 'op' && token.value === value) {
      this.at++;
      return;
    }
    throw new ExpressionError(`missing "${value}" for the "(" at column ${opening.column} (found ${describe(token)} at column ${token.column})`, token.column);
  }

  private peek(): Token {
    return this.tokens[this.at];
  }

  private next(): Token {
    return this.tokens[this.at++];
  }
}

function applyBinary(op: string, a: number, b: number, column: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      if (b === 0) throw new ExpressionError(`division by zero at column ${column}`, column);
      return a / b;
    case '%':
      if (b === 0) throw new ExpressionError(`modulo by zero at column ${column}`, column);
      return a % b;
    default:
      return power(a, b, column);
  }
}

function power(a: number, b: number, column: number): number {
  if (a === 0 && b < 0) throw new ExpressionError(`division by zero at column ${column}: 0 raised to a negative power`, column);
  if (a < 0 && !Number.isInteger(b)) throw new ExpressionError(`a negative number raised to a fractional power is not a real number (column ${column})`, column);
  return a ** b;
}

function describe(token: Token): string {
  if (token.kind === 'end') return 'the end';
  return `"${token.value}"`;
}
