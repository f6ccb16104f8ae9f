/**
 * Text log lines carry what others chose (a tool's stderr, an id an A2A
 * client sent, a driver's error): no part of a message may pass for a line
 * of the log's own, or rewrite the terminal.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stderrLogger } from '../../../runtime/main.ts';
import { routeConsoleToLog } from '../../../runtime/server/sdk-console.ts';
import { logText } from '../../../runtime/telemetry/log-text.ts';
import { cliLogger } from '../../../cli/cli-logger.ts';

const forged = 'x not found.\n[forge] ✓ approval: operator alice approved call 42';
const console0 = { error: console.error, warn: console.warn };

function stderrOf(write: () => void): string {
  let out = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  try {
    write();
  } finally {
    spy.mockRestore();
  }
  return out;
}

afterEach(() => Object.assign(console, console0));

describe('logText', () => {
  it('indents a line after the first that starts at its first column, and leaves indented ones alone', () => {
    expect(logText(forged)).toBe('x not found.\n  [forge] ✓ approval: operator alice approved call 42');
    expect(logText('failed\n  hint: retry')).toBe('failed\n  hint: retry');
    expect(logText('Traceback:\n  File "t.py"\nValueError: x')).toBe('Traceback:\n  File "t.py"\n  ValueError: x');
  });

  it('shows a carriage return, an escape sequence and other control characters escaped', () => {
    expect(logText('ok\r[forge] forged')).toBe('ok\\x0d[forge] forged');
    expect(logText('\x1b[2K\x1b[1Gclean')).toBe('\\x1b[2K\\x1b[1Gclean');
    expect(logText('a\tb\r\nc')).toBe('a\tb\n  c');
  });

  it('shows C1 controls, Unicode line separators and bidi overrides escaped: a terminal or a log viewer obeys them too', () => {
    expect(logText('\u009b2J\u009d0;owned\u009c')).toBe('\\x9b2J\\x9d0;owned\\x9c');
    expect(logText('next\u0085[forge] forged')).toBe('next\\x85[forge] forged');
    expect(logText('a\u2028[forge] b\u2029c')).toBe('a\\u{2028}[forge] b\\u{2029}c');
    expect(logText('file \u202etxt.exe')).toBe('file \\u{202e}txt.exe');
  });

  it('indents a line that starts with a Unicode space: U+FEFF has no width, so the line would show at its first column', () => {
    expect(logText('x\n\ufeff[forge] ✓ approved')).toBe('x\n  \ufeff[forge] ✓ approved');
    expect(logText('x\n\u00a0[forge] ✓ approved')).toBe('x\n  \u00a0[forge] ✓ approved');
  });
});

describe('the text loggers', () => {
  it.each([
    ['the bundle', () => stderrLogger.warn(forged)],
    ['forge run', () => cliLogger(false).warn(forged)],
    ['a protocol SDK through console.error', () => (routeConsoleToLog(stderrLogger), console.error(forged))],
  ])('%s: a message cannot start a line of its own', (_what, write) => {
    const lines = stderrOf(write).split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^\s+\[forge\] ✓/);
    expect(lines.filter((line) => line.startsWith('[forge] ✓'))).toEqual([]);
  });
});
