import { ForgeError } from '../../../diagnostics.ts';

/**
 * What grep_search asks of a search engine (ripgrep, or the JavaScript
 * fallback) and what either one answers, so both give the same shape.
 */
export interface GrepQuery {
  pattern: string;
  fixedStrings: boolean;
  caseInsensitive: boolean;
  /** Globs a file must match (any of them), relative to the search root; a glob without "/" matches a file name at any depth. */
  include: string[];
  exclude: string[];
  includeHidden: boolean;
  context: number;
  maxResults: number;
  /** Absolute, physical directory to search (or the directory of `file`). */
  root: string;
  /**
   * The work dir every file read is verified against. Not `root`: a search
   * root swapped for a symlink after the tool checked it would otherwise
   * become the boundary itself.
   */
  workDir: string;
  /** Search only this file (a name within root). */
  file?: string;
  signal: AbortSignal;
  /** Search files with more than one hard link (tool config allow_hardlinks). */
  allowHardlinks?: boolean;
}

export interface GrepMatch {
  /** Relative to the search root, with forward slashes. */
  path: string;
  line: number;
  text: string;
  before: string[];
  after: string[];
}

export interface GrepOutcome {
  matches: GrepMatch[];
  /** More matches existed than maxResults. */
  truncated: boolean;
  /** The search was stopped by its timeout; the matches are those found so far. */
  timedOut: boolean;
}

/** A pattern the regex engine refuses; the grep tool says which, with FORGE_GREP_PATTERN. */
export class GrepPatternError extends ForgeError {
  constructor(message: string) {
    super('FORGE_GREP_PATTERN', message);
  }
}

/** Longest line text returned; minified files have lines of megabytes. */
export const MAX_LINE_CHARS = 500;

export function clipLine(text: string): string {
  const line = text.replace(/\r?\n$/, '');
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

/**
 * Turns the lines seen in one file (matches and context lines, by number)
 * into matches with their context, as `grep -C` shows them.
 */
export function withContext(path: string, seen: Map<number, { text: string; match: boolean }>, context: number): GrepMatch[] {
  const out: GrepMatch[] = [];
  const numbers = [...seen.keys()].sort((a, b) => a - b);
  for (const line of numbers) {
    const entry = seen.get(line)!;
    if (!entry.match) continue;
    const before: string[] = [];
    const after: string[] = [];
    for (let l = line - context; l < line; l++) if (seen.has(l)) before.push(seen.get(l)!.text);
    for (let l = line + 1; l <= line + context; l++) if (seen.has(l)) after.push(seen.get(l)!.text);
    out.push({ path, line, text: entry.text, before, after });
  }
  return out;
}
