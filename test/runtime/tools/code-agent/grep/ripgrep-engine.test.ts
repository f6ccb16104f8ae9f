/**
 * The ripgrep engine trusts nothing rg says about a file: rg is started in a
 * directory the tool checked by path, and walks by path. Here a stand-in for
 * rg (a script that runs the real one) makes the swap happen in the worst
 * order, every time: the tool has checked `sw`, then `sw` becomes a symlink
 * to outside, rg searches there, and `sw` is put back before rg's answer is
 * read.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import { beforeEach, expect, it } from 'vitest';
import { tempDir } from '../../../../helpers/project.ts';
import { tools } from '../../../../helpers/tools.ts';

let work: string;
let outside: string;

beforeEach(() => {
  const base = tempDir('forge-rg-swap-');
  work = join(base, 'work');
  outside = join(base, 'outside');
  mkdirSync(join(work, 'sw'), { recursive: true });
  mkdirSync(join(work, '.forge'));
  mkdirSync(outside);
  writeFileSync(join(work, 'sw', 'secret.txt'), 'INSIDE text line\nsecond\n');
  writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret line\nsecond\n');
  writeFileSync(join(outside, 'only-outside.txt'), 'EXFIL secret line\n');
  writeFileSync(join(work, '.forge', 'secret.txt'), 'EXFIL state secret line\nsecond\n');
});

/** An executable standing in for rg: `body` (sh) around the real rg, run as "$RG" "$@". */
function fakeRipgrep(body: string): string {
  const path = join(tempDir('forge-fake-rg-'), 'rg');
  writeFileSync(path, `#!/bin/sh\nRG='${rgPath}'\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** rg started in `sw` after the tool checked it, with `sw` a symlink to `target` meanwhile, and put back before the answer is read. */
function swappingRipgrep(target: string): string {
  return fakeRipgrep(
    [
      `mv '${work}/sw' '${work}/.sw-real' && ln -s '${target}' '${work}/sw' && cd '${work}/sw' || exit 3`,
      '"$RG" "$@"; code=$?',
      `rm '${work}/sw' && mv '${work}/.sw-real' '${work}/sw'`,
      'exit $code',
    ].join('\n'),
  );
}

it.each([
  ['outside', () => outside],
  ['in the state dir', () => join(work, '.forge')],
])('returns no line of a file %s that rg searched after a swap, though the name is inside again', async (_where, target) => {
  const grep = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: swappingRipgrep(target()) } } });
  for (const args of [{ pattern: 'secret|text|second', path: 'sw', context: 1 }, { pattern: 'secret|text|second', path: 'sw/secret.txt' }]) {
    const value = await grep.value<{ engine: string; matches: { path: string; line: number; text: string; before: string[]; after: string[] }[] }>('grep_search', args);
    expect(value.engine).toBe('ripgrep');
    expect(JSON.stringify(value)).not.toContain('EXFIL');
    // rg's hits at lines 1 and 2 of sw/secret.txt: the inside file holds the same "second" at line 2 only, so
    // that one stands, its context read from the inside file.
    expect(value.matches.map((m) => `${m.path}:${m.line}`)).toEqual(['sw/secret.txt:2']);
    if (args.context) expect(value.matches[0]).toMatchObject({ text: 'second', before: ['INSIDE text line'], after: [] });
  }
});

it('says whether more matches exist from the confirmed ones only', async () => {
  // rg (outside) finds two matches where one is asked for; the inside file holds none of them. rg is stopped
  // then (killed with its process group, so a stand-in cannot put sw back) and asked again for more: here sw
  // stays swapped, and every run searches outside.
  writeFileSync(join(outside, 'secret.txt'), 'EXFIL secret line\nEXFIL secret line 2\n');
  const staysSwapped = fakeRipgrep(`[ -e '${work}/.sw-real' ] || { mv '${work}/sw' '${work}/.sw-real' && ln -s '${outside}' '${work}/sw'; } || exit 3\ncd '${work}/sw' && exec "$RG" "$@"`);
  const grep = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: staysSwapped } } });
  expect(await grep.value('grep_search', { pattern: 'secret', path: 'sw', max_results: 1 })).toMatchObject({ matches: [], truncated: false });
});

it("never passes on an rg error naming a file its walk met: only a bad pattern's message", async () => {
  // rg fails (exit 2) naming a file, as it does for one it cannot read, wherever its walk went.
  const failing = fakeRipgrep(`case "$*" in *' -- -') exec "$RG" "$@";; esac\necho "rg: ./EXFIL-unreadable-name: Permission denied (os error 13)" >&2\nexit 2`);
  const grep = await tools(['grep_search'], { workDir: work, config: { grep_search: { engine: 'ripgrep', ripgrep_path: failing } } });
  const value = await grep.value('grep_search', { pattern: 'anything', path: 'sw' });
  expect(value).toMatchObject({ engine: 'ripgrep', matches: [] });
  expect(JSON.stringify(value)).not.toContain('EXFIL');
  const bad = await grep.call('grep_search', { pattern: 'a(b', path: 'sw' });
  expect(bad).toMatchObject({ ok: false, error: { code: 'FORGE_GREP_PATTERN', message: expect.stringContaining('unclosed group') } });
  expect(JSON.stringify(bad)).not.toContain('EXFIL');
});
