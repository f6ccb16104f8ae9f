/**
 * The project cache's two ways of keeping entries (stages/project-cache.ts):
 * a kind every command reads whole drops what a command did not use; a kind
 * read in part keeps every entry, those a command did not use dropped first
 * past its limit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProjectCache } from '../../stages/project-cache.ts';
import { tempDir } from '../helpers/project.ts';

function storedKeys(cacheDir: string, kind: string): string[] {
  const [name] = readdirSync(join(cacheDir, kind));
  return Object.keys(JSON.parse(readFileSync(join(cacheDir, kind, name), 'utf8')).entries);
}

describe('the project cache', () => {
  it('keeps only the entries a command used, for a kind every command reads whole', () => {
    const cacheDir = tempDir('forge-cache-');
    const first = openProjectCache<number>('whole', '/project', 'maker', { cacheDir })!;
    for (const key of ['a', 'b', 'c']) first.set(key, 1);
    first.save();
    const second = openProjectCache<number>('whole', '/project', 'maker', { cacheDir })!;
    expect(second.get('a')).toBe(1);
    expect(second.get('c')).toBe(1);
    second.save();
    expect(storedKeys(cacheDir, 'whole')).toEqual(['a', 'c']);
  });

  it('keeps every entry for a kind read in part, past its limit dropping those a command did not use', () => {
    const cacheDir = tempDir('forge-cache-');
    const open = () => openProjectCache<number>('part', '/project', 'maker', { cacheDir, keep: { last: 3 } })!;
    const first = open();
    for (const key of ['a', 'b', 'c', 'd']) first.set(key, 1);
    first.save();
    // Every entry a command used is kept, past the limit too (a cache that dropped some would miss them each time).
    expect(storedKeys(cacheDir, 'part')).toEqual(['a', 'b', 'c', 'd']);
    // A command that reads one entry and adds one: those two stay, and the most recently written of the others fill the rest.
    const second = open();
    expect(second.get('b')).toBe(1);
    second.set('e', 1);
    second.save();
    expect(storedKeys(cacheDir, 'part')).toEqual(['d', 'b', 'e']);
    // Reading alone writes nothing (a hit stays a read).
    const third = open();
    expect(third.get('d')).toBe(1);
    third.save();
    expect(storedKeys(cacheDir, 'part')).toEqual(['d', 'b', 'e']);
    expect(openProjectCache('part', '/project', 'another maker', { cacheDir, keep: { last: 3 } })!.get('d')).toBeUndefined();
  });

  it('keeps, for a kind read in part, what another command wrote after this one read the file', () => {
    const cacheDir = tempDir('forge-cache-');
    const open = () => openProjectCache<number>('part', '/project', 'maker', { cacheDir, keep: { last: 10 } })!;
    const first = open();
    const second = open();
    first.set('a', 1);
    second.set('b', 2);
    first.save();
    second.save();
    expect(storedKeys(cacheDir, 'part')).toEqual(['a', 'b']);
  });
});
