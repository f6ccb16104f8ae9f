/**
 * file_read on large files: a page holds at most MAX_PAGE_CHARS of text whatever the file's size or line
 * lengths (parallel reads of a huge file cannot take the server's memory), its text is exact across the
 * reader's chunks, and the pages its description promises follow one another to the end.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_CHARS } from '../../../../runtime/tools/code-agent/file-read.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let work: string;
let t: ToolHarness;
/** 40 MB of 100-character lines with CRLF endings and a character of three UTF-8 bytes in each. */
const LINE = (n: number) => `${String(n).padStart(8, '0')} ${'€'.repeat(3)}${'x'.repeat(86)}\r\n`;
const BIG_LINES = 400_000;

beforeAll(async () => {
  work = tempDir('forge-pages-');
  writeFileSync(join(work, 'big.txt'), Array.from({ length: BIG_LINES }, (_, i) => LINE(i + 1)).join(''));
  writeFileSync(join(work, 'one-line.txt'), 'y'.repeat(3 * MAX_PAGE_CHARS));
  writeFileSync(join(work, 'tail.txt'), 'a\r\nb\nlast without a break');
  writeFileSync(join(work, 'empty.txt'), '');
  // Line 2 passes the budget, and the reader's 64 KiB chunks split it (the budget is 16 chunks).
  writeFileSync(join(work, 'split-at-budget.txt'), `${'z'.repeat(MAX_PAGE_CHARS - 11)}\n${'w'.repeat(99)}\n`);
  t = await tools(['file_read'], { workDir: work });
});

describe('file_read pages', () => {
  it('returns at most MAX_PAGE_CHARS of a 40 MB file even when asked for a million lines, stopping at a whole line', async () => {
    const page = (await t.value('file_read', { path: 'big.txt', limit: 1_000_000 })) as Record<string, unknown>;
    const content = page.content as string;
    expect(content.length).toBeLessThanOrEqual(MAX_PAGE_CHARS);
    const lines = Math.floor(MAX_PAGE_CHARS / LINE(1).length);
    expect(page).toMatchObject({ start_line: 1, end_line: lines, total_lines: BIG_LINES, truncated: true });
    expect(content).toBe(Array.from({ length: lines }, (_, i) => LINE(i + 1)).join(''));
  });

  it('continues exactly at end_line + 1, across chunk boundaries, up to the last line', async () => {
    const from = BIG_LINES - 50;
    const page = (await t.value('file_read', { path: 'big.txt', offset: from, limit: 1000 })) as Record<string, unknown>;
    expect(page).toMatchObject({ start_line: from, end_line: BIG_LINES, total_lines: BIG_LINES, truncated: false });
    expect(page.content).toBe(Array.from({ length: 51 }, (_, i) => LINE(from + i)).join(''));
  });

  it('leaves out the whole line that would pass the budget, also when a chunk of the file ends inside it', async () => {
    const page = (await t.value('file_read', { path: 'split-at-budget.txt' })) as Record<string, unknown>;
    expect(page.content).toBe(`${'z'.repeat(MAX_PAGE_CHARS - 11)}\n`);
    expect(page).toMatchObject({ start_line: 1, end_line: 1, total_lines: 2, truncated: true });
    expect(page.line_cut).toBeUndefined();
  });

  it('cuts a single line longer than the budget, and says so', async () => {
    const page = (await t.value('file_read', { path: 'one-line.txt' })) as Record<string, unknown>;
    expect((page.content as string).length).toBe(MAX_PAGE_CHARS);
    expect(page).toMatchObject({ start_line: 1, end_line: 1, total_lines: 1, truncated: false, line_cut: 1 });
    expect(page.note).toContain('only its start is shown');
  });

  it('keeps line endings as written and counts a last line without a break', async () => {
    expect(await t.value('file_read', { path: 'tail.txt' })).toMatchObject({ content: 'a\r\nb\nlast without a break', total_lines: 3, end_line: 3, truncated: false });
    expect(await t.value('file_read', { path: 'tail.txt', offset: 3 })).toMatchObject({ content: 'last without a break', start_line: 3, end_line: 3 });
    expect(await t.value('file_read', { path: 'empty.txt' })).toMatchObject({ content: '', start_line: 0, end_line: 0, total_lines: 0, truncated: false });
  });

  it('refuses an offset past the end with the number of lines', async () => {
    const result = await t.call('file_read', { path: 'tail.txt', offset: 9 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toContain('(3 lines)');
  });
});
