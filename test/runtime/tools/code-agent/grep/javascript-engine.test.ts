/**
 * Regression: the JavaScript grep verified every file against its search
 * root, so a search root swapped for a symlink to outside after the tool had
 * checked it became the boundary itself (seen once in the bounded race of
 * test/runtime/guard/file-tool-escapes.test.ts). Files are verified against
 * the work dir, whatever the search root has become.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { searchWithJavaScript } from '../../../../../runtime/tools/code-agent/grep/javascript-engine.ts';
import type { GrepQuery } from '../../../../../runtime/tools/code-agent/grep/grep-query.ts';
import { tempDir } from '../../../../helpers/project.ts';

function query(root: string, workDir: string, file?: string): GrepQuery {
  return { pattern: 'line', fixedStrings: false, caseInsensitive: false, include: [], exclude: [], includeHidden: false, context: 0, maxResults: 50, root, workDir, file, signal: new AbortController().signal };
}

describe('the JavaScript grep engine', () => {
  const base = tempDir('forge-grep-root-');
  const work = join(base, 'work');
  const outside = join(base, 'outside');
  mkdirSync(work);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret line\n');
  writeFileSync(join(work, 'inside.txt'), 'inside line\n');
  // What the search root is once swapped: a symlink inside the work dir pointing outside.
  symlinkSync(outside, join(work, 'sw'));

  it('finds nothing outside the work dir through a search root that became a symlink to outside', async () => {
    const outcome = await searchWithJavaScript(query(join(work, 'sw'), work));
    expect(JSON.stringify(outcome)).not.toContain('EXFIL');
    expect(outcome.matches).toEqual([]);
  });

  it('nor through a single file whose directory became one', async () => {
    const outcome = await searchWithJavaScript(query(join(work, 'sw'), work, 'secret.txt'));
    expect(JSON.stringify(outcome)).not.toContain('EXFIL');
  });

  it('still searches the work dir itself', async () => {
    const outcome = await searchWithJavaScript(query(work, work));
    expect(outcome.matches.map((m) => m.path)).toEqual(['inside.txt']);
  });
});
