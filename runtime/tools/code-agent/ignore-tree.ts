/**
 * .gitignore and .ignore files in a directory tree, read as git reads them:
 * each file's rules apply below its directory, a deeper file's rules win
 * (a "!" rule can re-include), and a path inside an ignored directory is
 * ignored. Files are read once per directory and kept.
 *
 * They are read like every file a file tool reads (guard/verified-open.ts):
 * opened without following a symlink, non-blocking, verified inside the
 * work dir, regular files only, and no larger than MAX_IGNORE_FILE_BYTES.
 * One that fails any of that is skipped, as git skips a symlinked
 * .gitignore: a link to /dev/zero or a FIFO named .gitignore would
 * otherwise fill memory or hold the I/O pool, and a link to a file outside
 * would feed that file into the rules (and what is listed would tell of it).
 */
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { PathGuard } from '../../guard/path-guard.ts';
import { readVerifiedUpTo, type FileAccessOptions } from '../../guard/verified-open.ts';

/** Larger ignore files are skipped: real ones are a few KB, and every one read is kept for the whole search. */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

const IGNORE_FILES = ['.gitignore', '.ignore'];

export class IgnoreTree {
  private readonly rules = new Map<string, Promise<Ignore | undefined>>();

  /** `root`: the searched directory (physical); `guard`: the work dir's, which every ignore file read is verified against. */
  constructor(
    private readonly guard: PathGuard,
    private readonly root: string,
    private readonly access: FileAccessOptions = {},
  ) {}

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
        for (const name of IGNORE_FILES) {
          const text = await this.readIgnoreFile(dir ? `${dir}/${name}` : name);
          if (text !== undefined) (found ??= ignore()).add(text);
        }
        return found;
      })();
      this.rules.set(dir, rules);
    }
    return rules;
  }

  /** An ignore file's text, or undefined: missing, or refused (not a regular file inside the work dir, hard-linked, too large). */
  private async readIgnoreFile(relative: string): Promise<string | undefined> {
    const bytes = await readVerifiedUpTo(this.guard, join(this.root, relative), relative, MAX_IGNORE_FILE_BYTES, this.access).catch(() => undefined);
    return bytes?.toString('utf8');
  }
}
