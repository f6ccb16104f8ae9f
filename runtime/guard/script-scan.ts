/**
 * What awk and sed program text may not contain: the parts of each language
 * that run commands or write files. Both scanners fail closed: text they
 * cannot read is refused, not waved through.
 */

/** What may stand between two awk tokens: blanks and comments (line continuations are joined first). Read generously, never stripped, so it can only widen a match. */
const GAP = String.raw`(?:\s|#[^\n]*(?:\n|$))*`;
/** A variable name, namespace-qualified or not (awk::f). */
const NAME = String.raw`[A-Za-z_]\w*(?:${GAP}::${GAP}[A-Za-z_]\w*)?`;

/** Why an awk program is refused, or undefined. String literals are looked through too: "cmd" | getline hides nothing. */
export function awkProblem(program: string): string | undefined {
  const code = program.replace(/\\\n/g, ' ');
  if (/\bsystem\s*\(/.test(code)) return 'calls system(), which runs a shell command';
  // gawk reads "@" and what follows as one construct across blanks and line continuations (@ load "x", @\<newline>f()).
  if (new RegExp(`@${GAP}(load|include|namespace)\\b`).test(code)) return 'loads code (@load / @include / @namespace)';
  // gawk's indirect call: @f() calls the function named by f's value, so f = "sys" "tem" reaches system().
  if (new RegExp(`@${GAP}${NAME}${GAP}\\(`).test(code)) return 'calls a function through a variable (gawk @name()), which can name system()';
  if (/\/inet[46]?\//.test(code)) return 'opens a network connection (gawk /inet/...)';
  if (/\|\s*&|\|&/.test(code)) return 'uses a coprocess (|&), which runs a command';
  // A pipe that is not the "||" operator: print | "cmd" or "cmd" | getline.
  if (/(^|[^|])\|(?!\|)/.test(code.replace(/\|\|/g, ''))) return 'pipes to or from a command (|)';
  // Output redirection in print/printf (> file, >> file); a comparison inside parentheses is allowed.
  if (/\bprintf?\b[^;{}]*?(^|[^(<>=!])>{1,2}(?!=)/.test(stripParenthesised(code))) return 'redirects output to a file (print > file)';
  if (/\b(fflush|close)\s*\(\s*"[^"]*\s[^"]*"/.test(code)) return 'names a command in close() or fflush()';
  return undefined;
}

/** Removes parenthesised groups (repeatedly), so `print (a > b)` is not read as a redirection. */
function stripParenthesised(code: string): string {
  let out = code;
  for (let i = 0; i < 20 && /\([^()]*\)/.test(out); i++) out = out.replace(/\([^()]*\)/g, '0');
  return out;
}

/** Why a sed script is refused, or undefined: the e and w/W commands, the e and w flags of s///. */
export function sedProblem(script: string): string | undefined {
  let i = 0;
  const n = script.length;
  const skipSpace = () => {
    while (i < n && /[\s;]/.test(script[i])) i++;
  };
  /** Reads a delimited part (regex or replacement) ending at an unescaped delimiter; false if unterminated. */
  const delimited = (delimiter: string): boolean => {
    while (i < n) {
      const c = script[i++];
      if (c === '\\') i++;
      else if (c === delimiter) return true;
      else if (c === '[' && delimiter !== '[') {
        // A bracket expression may hold the delimiter unescaped: [/].
        if (script[i] === '^') i++;
        if (script[i] === ']') i++;
        while (i < n && script[i] !== ']') i++;
        i++;
      }
    }
    return false;
  };
  const address = (): boolean => {
    const c = script[i];
    if (c === undefined) return true;
    if (/\d/.test(c)) {
      while (i < n && /[\d~]/.test(script[i])) i++;
      return true;
    }
    if (c === '$') {
      i++;
      return true;
    }
    if (c === '/') {
      i++;
      if (!delimited('/')) return false;
      while (i < n && /[IM]/.test(script[i])) i++;
      return true;
    }
    if (c === '\\') {
      const d = script[i + 1];
      i += 2;
      if (!d || !delimited(d)) return false;
      while (i < n && /[IM]/.test(script[i])) i++;
      return true;
    }
    return true;
  };
  while (i < n) {
    skipSpace();
    if (i >= n) break;
    if (script[i] === '}' || script[i] === '{') {
      i++;
      continue;
    }
    if (script[i] === '#') return undefined; // A comment runs to the end (line breaks never reach here).
    if (!address()) return 'cannot be read (an address is not closed)';
    while (i < n && script[i] === ' ') i++;
    if (script[i] === ',') {
      i++;
      while (i < n && script[i] === ' ') i++;
      if (script[i] === '+' || script[i] === '~') i++;
      if (!address()) return 'cannot be read (an address is not closed)';
    }
    while (i < n && /[\s!]/.test(script[i])) i++;
    const command = script[i++];
    if (command === undefined) break;
    switch (command) {
      case 'e':
        return 'uses the e command, which runs a shell command';
      case 'w':
      case 'W':
        return `uses the ${command} command, which writes a file`;
      case 's': {
        const d = script[i++];
        if (!d || d === '\\' || d === '\n') return 'cannot be read (s has no delimiter)';
        if (!delimited(d) || !delimited(d)) return 'cannot be read (an s command is not closed)';
        while (i < n && /[gpiImMe0-9w]/.test(script[i])) {
          const flag = script[i++];
          if (flag === 'e') return 'uses the e flag of s, which runs the result as a shell command';
          if (flag === 'w') return 'uses the w flag of s, which writes a file';
        }
        if (i < n && !/[\s;}#]/.test(script[i])) return `cannot be read (unknown flag "${script[i]}" of s)`;
        break;
      }
      case 'y': {
        const d = script[i++];
        if (!d || !delimited(d) || !delimited(d)) return 'cannot be read (a y command is not closed)';
        break;
      }
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
      case ':':
        // Text, a file to read or a label: the rest of the line (GNU sed), so nothing after it is a command.
        return undefined;
      case 'b':
      case 't':
      case 'T':
        while (i < n && !/[;}]/.test(script[i])) i++;
        break;
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        while (i < n && /[\d\s]/.test(script[i]) && script[i] !== ';') i++;
        break;
      case 'v':
        while (i < n && /[\d.]/.test(script[i])) i++;
        break;
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
        break;
      default:
        return `cannot be read (unknown command "${command}")`;
    }
  }
  return undefined;
}
