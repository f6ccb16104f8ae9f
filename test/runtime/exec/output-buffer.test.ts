/**
 * A process's stderr cut for a message (runtime/exec/output-buffer.ts): its last lines, and its first
 * error line when that falls before them.
 */
import { describe, expect, it } from 'vitest';
import { stderrExcerpt } from '../../../runtime/exec/output-buffer.ts';

describe('stderrExcerpt', () => {
  const node = [
    'node:internal/modules/cjs/loader:1210',
    '  throw err;',
    '  ^',
    '',
    "Error: Cannot find module '/srv/indx.js'",
    '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
    '    at Module._load (node:internal/modules/cjs/loader:1038:27)',
    '    at node:internal/main/run_main_module:28:49 {',
    "  code: 'MODULE_NOT_FOUND',",
    '  requireStack: []',
    '}',
    '',
    'Node.js v20.20.2',
  ].join('\n');

  it("keeps Node's error line ahead of the last lines, marked as cut", () => {
    expect(stderrExcerpt(node, 5)).toEqual(["Error: Cannot find module '/srv/indx.js'", '…', "  code: 'MODULE_NOT_FOUND',", '  requireStack: []', '}', '', 'Node.js v20.20.2']);
  });

  it.each([
    ['a Python traceback', 'Traceback (most recent call last):\n  File "s.py", line 1\nModuleNotFoundError: No module named \'mcp\'\nx\ny\nz\nw\nv', "ModuleNotFoundError: No module named 'mcp'"],
    ['a lower-case error:', 'starting\nerror: unknown flag --stdoi\nusage: server [options]\n  a\n  b\n  c\n  d\n  e', 'error: unknown flag --stdoi'],
  ])('finds the error line of %s', (_, text, line) => {
    expect(stderrExcerpt(text, 5)[0]).toBe(line);
  });

  it('gives the last lines alone when they hold everything, or no error line came before them', () => {
    expect(stderrExcerpt('one\ntwo\n', 5)).toEqual(['one', 'two']);
    expect(stderrExcerpt('a\nb\nc\nd\ne\nf\ng', 3)).toEqual(['e', 'f', 'g']);
    // The first error line before the tail, even when the tail holds another.
    expect(stderrExcerpt('Error: early\na\nb\nError: late\nc', 3)).toEqual(['Error: early', '…', 'b', 'Error: late', 'c']);
  });
});
