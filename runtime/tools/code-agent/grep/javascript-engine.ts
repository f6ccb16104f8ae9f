/**
 * grep_search without ripgrep: the same walk (sorted by name, depth first,
 * .gitignore and .ignore honoured, hidden files and the skipped directories
 * left out, symlinks not followed, binary files skipped) and the same
 * answer, with JavaScript regular expressions.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { picomatch } from '../../../vendor/libs.ts';
import { looksBinary } from '../../fs-results.ts';
import { IgnoreTree } from '../ignore-tree.ts';
import { SKIPPED_DIRS } from '../skipped-dirs.ts';
import { clipLine, GrepPatternError, withContext, type GrepOutcome, type GrepQuery } from './grep-query.ts';

/** Files larger than this are not searched by the fallback (ripgrep has no such limit). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export async function searchWithJavaScript(query: GrepQuery): Promise<GrepOutcome> {
  const regex = compile(query);
  const included = query.include.length ? picomatch(query.include.map(anchored), { dot: true }) : () => true;
  const excluded = query.exclude.length ? picomatch(query.exclude.map(anchored), { dot: true }) : () => false;
  const outcome: GrepOutcome = { matches: [], truncated: false, timedOut: false };

  const searchFile = async (relative: string, absolute: string) => {
    if (!included(relative) || excluded(relative)) return;
    const bytes = await readFile(absolute).catch(() => undefined);
    if (!bytes || bytes.length > MAX_FILE_BYTES || looksBinary(bytes)) return;
    const lines = bytes.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const seen = new Map<number, { text: string; match: boolean }>();
    let fileMatches = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!regex.test(lines[i].replace(/\r$/, ''))) continue;
      if (outcome.matches.length + fileMatches >= query.maxResults) {
        outcome.truncated = true;
        break;
      }
      fileMatches++;
      for (let c = Math.max(0, i - query.context); c <= Math.min(lines.length - 1, i + query.context); c++) {
        if (!seen.get(c + 1)?.match) seen.set(c + 1, { text: clipLine(lines[c]), match: c === i });
      }
    }
    outcome.matches.push(...withContext(relative, seen, query.context));
  };

  const ignores = new IgnoreTree(query.root);
  const walk = async (dirRelative: string): Promise<void> => {
    const absolute = join(query.root, dirRelative);
    const entries = await readdir(absolute, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (outcome.truncated || outcome.timedOut) return;
      if (query.signal.aborted) {
        outcome.timedOut = true;
        return;
      }
      if (!query.includeHidden && entry.name.startsWith('.')) continue;
      const relative = dirRelative ? `${dirRelative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (SKIPPED_DIRS.includes(entry.name) || (await ignores.ignoredHere(relative, true))) continue;
        await walk(relative);
      } else if (entry.isFile()) {
        if (await ignores.ignoredHere(relative, false)) continue;
        await searchFile(relative, join(query.root, relative));
        // Let timers (the timeout) run between files.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };

  if (query.file) await searchFile(query.file, join(query.root, query.file));
  else await walk('');
  outcome.matches = outcome.matches.slice(0, query.maxResults);
  return outcome;
}

function compile(query: GrepQuery): RegExp {
  const source = query.fixedStrings ? query.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : query.pattern;
  try {
    return new RegExp(source, query.caseInsensitive ? 'i' : '');
  } catch (err) {
    throw new GrepPatternError(`regex parse error: ${(err as Error).message}`);
  }
}

/** ripgrep's globs follow .gitignore: one without a "/" matches a name at any depth; a leading "/" anchors to the root. */
function anchored(glob: string): string {
  if (glob.startsWith('/')) return glob.slice(1);
  return glob.includes('/') ? glob : `**/${glob}`;
}
