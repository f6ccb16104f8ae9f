/**
 * Exact-match text edits, shared by file_edit, atomic_edit and file_patch:
 * the old text must occur exactly once (or replace_all says every
 * occurrence), and a miss explains itself with line numbers. Also the
 * unified diff every editing tool returns.
 */
import { createTwoFilesPatch } from 'diff';
import { WHOLE_READ_LIMIT } from './file-read.ts';

export interface TextEdit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export type EditOutcome =
  | { ok: true; content: string; replacements: number }
  | { ok: false; code: 'FORGE_EDIT_NO_MATCH' | 'FORGE_EDIT_AMBIGUOUS' | 'FORGE_EDIT_NOOP' | 'FORGE_FILE_TOO_LARGE'; message: string; hint: string };

export const EDIT_SCHEMA = {
  type: 'object',
  required: ['old_string', 'new_string'],
  additionalProperties: false,
  properties: {
    old_string: { type: 'string', minLength: 1, description: 'The exact text to replace, whitespace and line breaks included.' },
    new_string: { type: 'string', description: 'The text to put in its place.' },
    replace_all: { type: 'boolean', default: false, description: 'Replace every occurrence instead of requiring exactly one.' },
  },
} as const;

/** Applies one edit to `content`; `where` names the file in messages. */
export function applyEdit(content: string, edit: TextEdit, where: string): EditOutcome {
  if (edit.old_string === edit.new_string) {
    return { ok: false, code: 'FORGE_EDIT_NOOP', message: `old_string and new_string are the same in ${where}`, hint: 'give the new text in new_string' };
  }
  let { old_string: oldText, new_string: newText } = edit;
  let offsets = occurrences(content, oldText);
  // A model usually writes "\n"; a file with Windows line endings should still match.
  if (offsets.length === 0 && content.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r\n')) {
    oldText = oldText.replace(/\n/g, '\r\n');
    newText = newText.replace(/\r?\n/g, '\r\n');
    offsets = occurrences(content, oldText);
  }
  if (offsets.length === 0) {
    const near = looseMatchLine(content, edit.old_string);
    return {
      ok: false,
      code: 'FORGE_EDIT_NO_MATCH',
      message: `old_string was not found in ${where}`,
      hint: near
        ? `text that differs only in whitespace starts at line ${near}; copy it exactly (file_read shows it)`
        : 'read the file with file_read and copy the text to replace exactly, whitespace included',
    };
  }
  if (offsets.length > 1 && !edit.replace_all) {
    // The lines of the first ten only, in one pass: each counted from the start made 60,000 matches cost 13 s.
    const lines = linesAt(content, offsets.slice(0, 10));
    return {
      ok: false,
      code: 'FORGE_EDIT_AMBIGUOUS',
      message: `old_string occurs ${offsets.length} times in ${where} (lines ${lines.join(', ')}${offsets.length > 10 ? ', …' : ''})`,
      hint: 'include more of the surrounding text so it occurs once, or set replace_all to replace every occurrence',
    };
  }
  // Known before it is made: 530 a's each replaced by a megabyte would be 530 MB, written, diffed and sent back.
  // (In characters, against the byte limit the file tools read whole: a character is at least a byte.)
  const length = content.length + offsets.length * (newText.length - oldText.length);
  if (length > WHOLE_READ_LIMIT) {
    return { ok: false, code: 'FORGE_FILE_TOO_LARGE', message: `the edit would make ${where} ${length} characters long; files up to ${WHOLE_READ_LIMIT} can be edited`, hint: 'replace fewer occurrences, or with less text' };
  }
  let out = '';
  let last = 0;
  for (const offset of offsets) {
    out += content.slice(last, offset) + newText;
    last = offset + oldText.length;
  }
  return { ok: true, content: out + content.slice(last), replacements: offsets.length };
}

/** Non-overlapping occurrences, left to right. */
function occurrences(content: string, text: string): number[] {
  const found: number[] = [];
  for (let at = content.indexOf(text); at !== -1; at = content.indexOf(text, at + text.length)) found.push(at);
  return found;
}

function lineAt(content: string, offset: number): number {
  return linesAt(content, [offset])[0];
}

/** The line (1-based) of each offset, given in ascending order, counted in one pass. */
function linesAt(content: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let newline = content.indexOf('\n');
  for (const offset of offsets) {
    for (; newline !== -1 && newline < offset; newline = content.indexOf('\n', newline + 1)) line++;
    lines.push(line);
  }
  return lines;
}

/** The line where the text occurs if runs of whitespace are ignored, to point a near miss out. */
function looseMatchLine(content: string, text: string): number | undefined {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return undefined;
  const pattern = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'));
  const match = pattern.exec(content);
  return match ? lineAt(content, match.index) : undefined;
}

/** A unified diff of one file (git style: a/ and b/ prefixes, hunk headers, 3 lines of context). */
export function unifiedDiff(path: string, before: string, after: string, options: { oldPath?: string } = {}): string {
  // Bounded: the diff is computed on the agent's thread, and its cost grows with the file's lines times the lines
  // changed (5,000 scattered one-line hunks held the thread 7 s, 10,000 held it 32 s). Past the bound the result
  // says so instead; the change itself was made in full.
  const patch = createTwoFilesPatch(`a/${options.oldPath ?? path}`, `b/${path}`, before, after, undefined, undefined, { context: 3, maxEditLength: MAX_DIFF_EDITS, timeout: MAX_DIFF_MS });
  const note = (text: string) => `--- a/${options.oldPath ?? path}\n+++ b/${path}\n(${text})\n`;
  if (patch === undefined) {
    const lines = (text: string) => text.split('\n').length;
    return note(`too many changes to show as a diff: more than ${MAX_DIFF_EDITS} lines changed, or more than ${MAX_DIFF_MS / 1000} s to find them; ${lines(before)} lines before, ${lines(after)} after`);
  }
  if (patch.length > MAX_DIFF_CHARS) return note(`the diff is ${patch.length} characters: too large to show; file_read shows the file`);
  // The library starts with a line of "=" (a separator for several files); git's format has none.
  return patch.replace(/^=+\n/, '');
}

/** The longest diff a result carries (every call's result is held, sent and logged whole). */
const MAX_DIFF_CHARS = 1024 * 1024;

/** The most lines added and removed a result's diff shows, and the most time it may take to find them. */
const MAX_DIFF_EDITS = 2_000;
const MAX_DIFF_MS = 1_000;
