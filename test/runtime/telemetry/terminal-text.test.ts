/** Other parties' text on a terminal: orders shown as escapes, and a streamed text shown as the whole text would be. */
import { describe, expect, it } from 'vitest';
import { LONE_SURROGATE } from '../../../runtime/lone-surrogate.ts';
import { TerminalStream, terminalText } from '../../../runtime/telemetry/terminal-text.ts';

describe('TerminalStream', () => {
  const tricky = 'a\r\nb😀c\rd\x1b[2Je\u202ef\r\n\r\n😀😀\r';

  it('shows a text cut anywhere, into pieces of any size, exactly as terminalText shows it whole', () => {
    for (let size = 1; size <= tricky.length; size++) {
      for (let offset = 0; offset < size; offset++) {
        const stream = new TerminalStream();
        let shown = stream.write(tricky.slice(0, offset));
        for (let at = offset; at < tricky.length; at += size) shown += stream.write(tricky.slice(at, at + size));
        expect(shown + stream.end(), `pieces of ${size} from ${offset}`).toBe(terminalText(tricky));
      }
    }
  });

  it('never writes half of a surrogate pair or a lone carriage return', () => {
    const stream = new TerminalStream();
    const shown = ['x\ud83d', '\ude00\r', '\n'].map((piece) => stream.write(piece));
    expect(shown).toEqual(['x', '😀', '\n']);
    for (const text of shown) expect(LONE_SURROGATE.test(text) || text.includes('\r')).toBe(false);
  });
});
