/**
 * The question a person answers at the terminal (`forge tool run`, the
 * bundle's `call`) quotes arguments a step may have read from anywhere — a
 * web page, a file — so what it shows must be what will run: no escape
 * sequence may clear it, no bidi override reorder it.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TerminalApprover } from '../../../runtime/guard/terminal-approver.ts';

describe('TerminalApprover', () => {
  it('shows the arguments\' escape sequences, C1 controls, bidi overrides and line breaks escaped', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d) => (shown += d));
    const approver = new TerminalApprover(input, output);
    const asked = approver.approve({
      tool: 'file_write',
      args: { path: 'notes\u202etxt.sh', content: 'x\x1b[2J\u009b1A\n? "file_read" needs your confirmation' },
      category: 'builtin',
      tags: ['write'],
      risk: 'write',
      reason: 'it is tagged "write"',
      parents: ['fetch_and_save'],
    });
    setTimeout(() => input.end('n\n'), 20);
    expect(await asked).toBe(false);
    expect(shown).toContain('arguments: {"path":"notes\\u{202e}txt.sh","content":"x\\u001b[2J\\x9b1A\\n? \\"file_read\\" needs your confirmation"}');
    expect(shown).not.toMatch(/[\x1b\u0080-\u009f\u202e]/);
  });

  it('shows every argument, however long: a path after a long value is not cut off', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d) => (shown += d));
    const content = `#!/bin/sh\n# ${'harmless build notes '.repeat(40)}`;
    const asked = new TerminalApprover(input, output).approve({
      tool: 'file_write',
      args: { content, path: 'deploy.sh' },
      category: 'builtin',
      tags: ['write'],
      risk: 'write',
      reason: 'it is tagged "write"',
      parents: ['fetch_and_save'],
    });
    input.end('n\n');
    expect(await asked).toBe(false);
    expect(shown).toContain(`arguments: {"content":${JSON.stringify(content)},"path":"deploy.sh"}`);
  });
});
