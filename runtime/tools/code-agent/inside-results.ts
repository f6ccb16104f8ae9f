/**
 * The last check of every search and listing: each path a search produced
 * (after glob and brace expansion, or from ripgrep's walk) is resolved by
 * the path guard again, and kept only if it is inside the work dir — and,
 * unless hard links are allowed, only if it is not hard-linked from
 * elsewhere. A search engine's own walk is then never what the guard
 * relies on.
 */
import { lstat } from 'node:fs/promises';
import type { PathGuard } from '../../guard/path-guard.ts';

export async function insideResults<T extends { path: string }>(guard: PathGuard, results: readonly T[], allowHardlinks = true): Promise<T[]> {
  const verdicts = new Map<string, Promise<boolean>>();
  const inside = (path: string) => {
    let verdict = verdicts.get(path);
    if (!verdict) {
      verdict = (async () => {
        try {
          const target = guard.resolve(path);
          if (allowHardlinks) return true;
          const info = await lstat(target.absolute);
          return !(info.isFile() && info.nlink > 1);
        } catch {
          return false; // Outside (a PathRefusedError), or gone since the search saw it.
        }
      })();
      verdicts.set(path, verdict);
    }
    return verdict;
  };
  const kept: T[] = [];
  for (const result of results) if (await inside(result.path)) kept.push(result);
  return kept;
}
