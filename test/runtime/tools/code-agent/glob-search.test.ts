/**
 * glob_search trusts nothing fast-glob reports about a file: fast-glob walks
 * by path in this process. Here its walk is made to happen in the worst
 * order, every time: the tool has checked the search path, then `sw` is a
 * symlink (to outside, or into the state dir) while fast-glob walks, and is
 * put back before the results are looked at.
 */
import { mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, expect, it, vi } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools } from '../../../helpers/tools.ts';

const walk = vi.hoisted(() => ({ around: undefined as undefined | { before(): void; after(): void } }));

vi.mock('fast-glob', async (importOriginal) => {
  const real = ((await importOriginal()) as { default: (...args: unknown[]) => Promise<unknown> }).default;
  const swapped = async (...args: unknown[]) => {
    walk.around?.before();
    try {
      return await real(...args);
    } finally {
      walk.around?.after();
    }
  };
  return { default: Object.assign(swapped, real) };
});

let work: string;
let outside: string;

beforeEach(() => {
  const base = tempDir('forge-glob-swap-');
  work = join(base, 'work');
  outside = join(base, 'outside');
  mkdirSync(join(work, 'sw'), { recursive: true });
  mkdirSync(join(work, '.forge', 'forged'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(work, 'sw', 'secret.txt'), 'INSIDE\n');
  writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret, longer than the inside file\n');
  writeFileSync(join(outside, 'EXFIL-only-outside.txt'), 'x');
  writeFileSync(join(work, '.forge', 'secret.txt'), 'EXFIL state, longer than the inside file\n');
  writeFileSync(join(work, '.forge', 'forged', 'EXFIL-tool.ts'), 'x');
  walk.around = undefined;
});

it.each([
  ['outside', () => outside],
  ['in the state dir', () => join(work, '.forge')],
])('lists no file %s that fast-glob walked into after a swap, nor its size, though the name is inside again', async (_where, target) => {
  walk.around = {
    before() {
      renameSync(join(work, 'sw'), join(work, '.sw-real'));
      symlinkSync(target(), join(work, 'sw'));
    },
    after() {
      unlinkSync(join(work, 'sw'));
      renameSync(join(work, '.sw-real'), join(work, 'sw'));
    },
  };
  const glob = await tools(['glob_search'], { workDir: work });
  for (const args of [{ pattern: 'sw/**', include_hidden: true }, { pattern: '**', path: 'sw', include_hidden: true }]) {
    const value = await glob.value<{ files: { path: string; size: number }[]; total: number }>('glob_search', args);
    expect(JSON.stringify(value)).not.toContain('EXFIL');
    // sw/secret.txt exists inside again; it is listed as it is there (its size), if at all.
    for (const file of value.files) expect(file).toMatchObject({ path: 'sw/secret.txt', size: 'INSIDE\n'.length });
    expect(value.total).toBe(value.files.length);
  }
});

it('lists the files inside as they are when nothing is swapped', async () => {
  const glob = await tools(['glob_search'], { workDir: work });
  const value = await glob.value<{ files: { path: string; size: number }[] }>('glob_search', { pattern: '**', include_hidden: true });
  expect(value.files).toEqual([{ path: 'sw/secret.txt', size: 'INSIDE\n'.length, modified: expect.any(String) }]);
});
