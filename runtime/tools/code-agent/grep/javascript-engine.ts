/**
 * grep_search without ripgrep: the same walk (sorted by name, depth first,
 * .gitignore and .ignore honoured, hidden files and the skipped directories
 * left out, symlinks not followed, binary files skipped) and the same
 * answer, with JavaScript regular expressions — run in a worker thread that
 * is terminated at the timeout, so no pattern can hold the server's thread.
 * Directories and files are opened as verified descriptors (see
 * guard/verified-open.ts): a path swapped for a symlink mid-walk is skipped.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PathGuard } from '../../../guard/path-guard.ts';
import { openForRead, readVerified } from '../../../guard/verified-open.ts';
import { picomatch } from '../../../vendor/libs.ts';
import { looksBinary } from '../../fs-results.ts';
import { IgnoreTree } from '../ignore-tree.ts';
import { SKIPPED_DIRS } from '../skipped-dirs.ts';
import { clipLine, GrepPatternError, withContext, type GrepOutcome, type GrepQuery } from './grep-query.ts';
import { RegexAborted, RegexWorker, type FileHits } from './regex-worker.ts';

/** Files larger than this are not searched by the fallback (ripgrep has no such limit). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export async function searchWithJavaScript(query: GrepQuery): Promise<GrepOutcome> {
  const regex = new RegexWorker(query.signal);
  try {
    return await search(query, regex);
  } catch (err) {
    if (err instanceof RegexAborted) return { matches: [], truncated: false, timedOut: true };
    throw err;
  } finally {
    await regex.close();
  }
}

async function search(query: GrepQuery, regex: RegexWorker): Promise<GrepOutcome> {
  const source = query.fixedStrings ? query.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : query.pattern;
  const invalid = await regex.compile(source, query.caseInsensitive ? 'i' : '');
  if (invalid !== undefined) throw new GrepPatternError(`regex parse error: ${invalid}`);
  const guard = new PathGuard(query.workDir);
  const included = query.include.length ? picomatch(query.include.map(anchored), { dot: true }) : () => true;
  const excluded = query.exclude.length ? picomatch(query.exclude.map(anchored), { dot: true }) : () => false;
  const outcome: GrepOutcome = { matches: [], truncated: false, timedOut: false };

  const searchFile = async (relative: string, absolute: string) => {
    if (!included(relative) || excluded(relative)) return;
    // Hard-linked files are skipped unless allowed, FIFOs and devices always (never opened blocking).
    const read = await readVerified(guard, absolute, relative, { allowHardlinks: query.allowHardlinks }).catch(() => undefined);
    const bytes = read?.bytes;
    if (!bytes || bytes.length > MAX_FILE_BYTES || looksBinary(bytes)) return;
    const seen = new Map<number, { text: string; match: boolean }>();
    let fileMatches = 0;
    let found: FileHits;
    try {
      found = await regex.match(bytes, query.maxResults - outcome.matches.length + 1, query.context);
    } catch (err) {
      if (!(err instanceof RegexAborted)) throw err;
      outcome.timedOut = true;
      return;
    }
    for (const i of found.hits) {
      if (outcome.matches.length + fileMatches >= query.maxResults) {
        outcome.truncated = true;
        break;
      }
      fileMatches++;
      for (let c = i - query.context; c <= i + query.context; c++) {
        const text = found.lines.get(c);
        if (text !== undefined && !seen.get(c + 1)?.match) seen.set(c + 1, { text: clipLine(text), match: c === i });
      }
    }
    outcome.matches.push(...withContext(relative, seen, query.context));
  };

  const ignores = new IgnoreTree(guard, query.root, { allowHardlinks: query.allowHardlinks });
  const walk = async (dirRelative: string): Promise<void> => {
    const absolute = join(query.root, dirRelative);
    const entries = await listVerified(guard, absolute, dirRelative || '.');
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

/** A directory's entries, read through a descriptor verified inside the root (none if it was swapped out). */
async function listVerified(guard: PathGuard, absolute: string, shown: string) {
  const opened = await openForRead(guard, absolute, shown, {}, true).catch(() => undefined);
  if (!opened) return [];
  try {
    return opened.info.isDirectory() ? await readdir(opened.self, { withFileTypes: true }) : [];
  } catch {
    return [];
  } finally {
    await opened.handle.close();
  }
}

/** ripgrep's globs follow .gitignore: one without a "/" matches a name at any depth; a leading "/" anchors to the root. */
function anchored(glob: string): string {
  if (glob.startsWith('/')) return glob.slice(1);
  return glob.includes('/') ? glob : `**/${glob}`;
}
