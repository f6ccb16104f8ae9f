/**
 * A parsed YAML file that remembers where everything came from, so any
 * value (or key) can be turned back into file:line:column.
 */
import { CST, isMap, isScalar, isSeq, Lexer, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { error, warning, type Diagnostic, type Location } from '../../runtime/diagnostics.ts';

export type PathSegment = string | number;

export class YamlSource {
  readonly lines: string[];

  private constructor(
    readonly file: string,
    readonly text: string,
    readonly document: Document,
    private readonly counter: LineCounter,
  ) {
    this.lines = text.split(/\r?\n/);
  }

  static parse(file: string, text: string): { source: YamlSource; diagnostics: Diagnostic[] } {
    const counter = new LineCounter();
    const document = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
    const source = new YamlSource(file, text, document, counter);
    const diagnostics: Diagnostic[] = [];
    // An error found at the end of the file (an unclosed bracket) is reported
    // on the last line that has text, where the reader can do something about it.
    const lastText = text.trimEnd().length - 1;
    for (const e of document.errors) {
      // A flow collection never closed ([tools) is found only where the next key starts: point at its opening bracket.
      const close = /end with an? ([\]}])/.exec(e.message)?.[1] as ']' | '}' | undefined;
      const opener = close ? unclosedOpener(text, e.pos[0], close) : undefined;
      if (close && opener !== undefined) {
        diagnostics.push(error('FORGE_YAML_SYNTAX', `this "${text[opener]}" is never closed`, source.offsetLocation(opener), `close it with "${close}"`));
        continue;
      }
      diagnostics.push(error('FORGE_YAML_SYNTAX', firstLine(e.message), source.offsetLocation(Math.min(e.pos[0], Math.max(0, lastText))), yamlHint(e.code)));
    }
    for (const w of document.warnings) {
      diagnostics.push(warning('FORGE_YAML_WARNING', firstLine(w.message), source.offsetLocation(w.pos[0])));
    }
    return { source, diagnostics };
  }

  toJS(): unknown {
    return this.document.toJS();
  }

  offsetLocation(offset: number): Location {
    const { line, col } = this.counter.linePos(offset);
    return { file: this.file, line, column: col, lineText: this.lines[line - 1] };
  }

  /**
   * The location of character `offset` of the string at `path` — inside a
   * block scalar (`bash: |`), the line and column of that character in the file.
   */
  locateInString(path: readonly PathSegment[], offset: number): Location {
    const node = this.nodeAt(path);
    const start = node?.range?.[0];
    if (!isScalar(node) || start === undefined || typeof node.value !== 'string') return this.locate(path);
    const before = node.value.slice(0, offset);
    const lineInValue = before.split('\n').length - 1;
    const columnInLine = before.length - (before.lastIndexOf('\n') + 1);
    const at = this.offsetLocation(start);
    if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
      // Content starts on the line after the header (| or >), indented.
      const lineIndex = at.line! + lineInValue; // 0-based index of the content line
      const firstContent = this.lines.slice(at.line!).find((l) => l.trim() !== '') ?? '';
      const indent = firstContent.length - firstContent.trimStart().length;
      return { file: this.file, line: lineIndex + 1, column: indent + columnInLine + 1, lineText: this.lines[lineIndex] };
    }
    if (lineInValue > 0) return at;
    const quote = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' ? 1 : 0;
    return { ...at, column: at.column! + quote + columnInLine };
  }

  /** The location of the value at `path` (or of its key, which is where a reader looks for a misspelt field). */
  locate(path: readonly PathSegment[], target: 'value' | 'key' = 'value'): Location {
    const { node, key, deepest } = this.walk(path);
    const chosen = target === 'key' && key ? key : node ?? key ?? deepest;
    const offset = chosen?.range?.[0];
    return offset === undefined ? { file: this.file, line: 1, column: 1, lineText: this.lines[0] } : this.offsetLocation(offset);
  }

  /** The node at `path`, if the document has one there. */
  private nodeAt(path: readonly PathSegment[]): Node | undefined {
    const walked = this.walk(path);
    return walked.complete ? walked.node : undefined;
  }

  /**
   * Follows `path` as far as the document goes: the node it stopped at (the
   * map that lacks the next key, or nothing where a value is missing), the
   * key that named the last value found, and the deepest node found.
   */
  private walk(path: readonly PathSegment[]): { node?: Node; key?: Node; deepest?: Node; complete: boolean } {
    let node = (this.document.contents ?? undefined) as Node | undefined;
    let key: Node | undefined;
    let deepest = node;
    for (const segment of path) {
      if (isMap(node)) {
        const pair = node.items.find((item) => (item.key as { value?: unknown } | null)?.value === segment || item.key === segment);
        if (!pair) return { node, key, deepest, complete: false };
        key = pair.key as Node;
        node = (pair.value ?? undefined) as Node | undefined;
      } else if (isSeq(node) && typeof segment === 'number') {
        key = undefined;
        node = node.items[segment] as Node | undefined;
      } else {
        return { node, key, deepest, complete: false };
      }
      if (!node) return { node, key, deepest, complete: false };
      deepest = node;
    }
    return { node, key, deepest, complete: node !== undefined };
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * The offset of the "[" (or "{") before `before` that nothing after it closes, if there is one.
 * Brackets are read from YAML's own tokens, so those in comments, quoted strings and block scalars
 * do not count; a bracket closed on an under-indented line is closed (the indentation is the problem).
 */
function unclosedOpener(text: string, before: number, close: ']' | '}'): number | undefined {
  const open = close === ']' ? '[' : '{';
  const brackets: { at: number; char: string }[] = [];
  let offset = 0;
  let blockContent = false;
  for (const token of new Lexer().lex(text)) {
    // Control tokens (document start, scalar, flow error) stand for no text.
    if (token.length === 1 && token.charCodeAt(0) < 0x20 && !'\n\r\t'.includes(token)) continue;
    const type = CST.tokenType(token);
    if (type === 'block-scalar-header') blockContent = true;
    else if (blockContent && type !== 'newline') blockContent = false;
    else if (type !== 'comment' && type !== 'single-quoted-scalar' && type !== 'double-quoted-scalar') {
      for (let k = 0; k < token.length; k++) if (token[k] === open || token[k] === close) brackets.push({ at: offset + k, char: token[k] });
    }
    offset += token.length;
  }
  const openers = brackets.map((b, index) => ({ ...b, index })).filter((b) => b.char === open && b.at < before);
  for (const opener of openers.reverse()) {
    let depth = 0;
    for (const b of brackets.slice(opener.index)) {
      depth += b.char === open ? 1 : -1;
      if (depth === 0) break;
    }
    if (depth > 0) return opener.at;
  }
  return undefined;
}

function yamlHint(code: string): string | undefined {
  switch (code) {
    case 'DUPLICATE_KEY':
      return 'each key may appear once in a mapping';
    case 'TAB_AS_INDENT':
      return 'YAML indents with spaces, not tabs';
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
      return 'check the indentation of this line against the lines above';
    default:
      return undefined;
  }
}
