/**
 * Text someone else chose, made safe to show on a terminal: a model's answer,
 * a tool's error or stderr, an MCP server's name or a tool description. A
 * terminal obeys what the bytes say, so every character that is an order
 * rather than a glyph is shown escaped instead: C0 controls but the newline
 * and the tab (a carriage return rewrites the line, ESC starts a sequence
 * that sets the title, writes the clipboard, draws an OSC 8 link or clears
 * the screen), DEL, the C1 controls (U+009B is a whole CSI on a terminal
 * that reads 8-bit controls, U+0085 a new line), the Unicode line and
 * paragraph separators (a line break to many log viewers), and the bidi
 * overrides and isolates, which reorder what is shown after them (an
 * approval prompt's arguments, a file name). Only `\r\n` is kept, as `\n`.
 */
const UNSHOWN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function terminalText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(UNSHOWN, escaped);
}

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * terminalText for text that arrives in pieces (a model's streamed answer). A piece may end inside
 * a `\r\n`, which would show as `\x0d` and a line break, or inside a surrogate pair, which
 * would be written as two U+FFFD: such a last character waits for the next piece, or for `end`.
 */
export class TerminalStream {
  private held = '';

  write(piece: string): string {
    const text = this.held + piece;
    const last = text.charCodeAt(text.length - 1);
    const split = last === 0x0d || (last >= 0xd800 && last <= 0xdbff);
    this.held = split ? text.slice(-1) : '';
    return terminalText(split ? text.slice(0, -1) : text);
  }

  /** What is still held: before anything else is shown, and at the end. */
  end(): string {
    const held = this.held;
    this.held = '';
    return terminalText(held);
  }
}

/** The same on one line, where a line break would start a line that is not the text's (`→ tool …`, `? run … [y/N]`): shown as `\n`. */
export function terminalLine(text: string): string {
  return terminalText(text).replace(/\n/g, '\\n');
}

/** Every string in a value (keys too) through terminalText: a tool spec someone else wrote (an MCP server's, an OpenAPI document's, a forged tool's), rendered field by field. */
export function terminalStrings<T>(value: T): T {
  if (typeof value === 'string') return terminalText(value) as T;
  if (Array.isArray(value)) return value.map(terminalStrings) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [terminalText(k), terminalStrings(v)])) as T;
  return value;
}
