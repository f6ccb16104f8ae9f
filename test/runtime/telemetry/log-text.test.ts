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
