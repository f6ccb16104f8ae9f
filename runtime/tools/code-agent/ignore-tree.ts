/**
 * .gitignore and .ignore files in a directory tree, read as git reads them:
 * each file's rules apply below its directory, a deeper file's rules win
 * (a "!" rule can re-include), and a path inside an ignored directory is
 * ignored. Files are read once per directory and kept.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export class IgnoreTree {
  private readonly rules = new Map<string, Promise<Ignore | undefined>>();

  constructor(private readonly root: string) {}

  /** Whether `relative` (to the root, "/"-separated) is ignored, its parent directories included. */
  async ignored(relative: string, isDirectory: boolean): Promise<boolean> {
    const parts = relative.split('/');
    for (let i = 1; i < parts.length; i++) {
      if (await this.ignoredHere(parts.slice(0, i).join('/'), true)) return true;
    }
    return this.ignoredHere(relative, isDirectory);
  }

  /** Only the rules of the directories above `relative` decide (its parents are known not to be ignored). */
  async ignoredHere(relative: string, isDirectory: boolean): Promise<boolean> {
    const parts = relative.split('/');
    for (let depth = parts.length - 1; depth >= 0; depth--) {
      const base = parts.slice(0, depth).join('/');
      const rules = await this.rulesOf(base);
      if (!rules) continue;
      const within = parts.slice(depth).join('/');
      const result = rules.test(isDirectory ? `${within}/` : within);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }

  private rulesOf(dir: string): Promise<Ignore | undefined> {
    let rules = this.rules.get(dir);
    if (!rules) {
      rules = (async () => {
        let found: Ignore | undefined;
        for (const name of ['.gitignore', '.ignore']) {
          const text = await readFile(join(this.root, dir, name), 'utf8').catch(() => undefined);
          if (text !== undefined) (found ??= ignore()).add(text);
        }
        return found;
      })();
      this.rules.set(dir, rules);
    }
    return rules;
  }
}
