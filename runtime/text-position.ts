/** Where a character offset falls in a text: its line and column (1-based), and that line's text. */
export function textPosition(text: string, offset: number): { line: number; column: number; lineText: string } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n'), lineText: text.split('\n')[line - 1] ?? '' };
}
