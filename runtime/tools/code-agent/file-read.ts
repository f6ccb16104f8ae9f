import { lstat, readdir, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { PathGuard } from '../../guard/path-guard.ts';
import { openForRead, type OpenedEntry } from '../../guard/verified-open.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure, looksBinary } from '../fs-results.ts';
import { fail, ok, type ToolResult } from '../model.ts';
import { FILE_ACCESS_CONFIG_SCHEMA, fileAccess } from './file-access-config.ts';

/**
 * The most text one call returns: a page stops before the line that would pass it (one line longer than
 * this comes back cut, and says so). Each call holds at most this much of the file, whatever its size, so
 * parallel reads of a huge file cannot take the server's memory.
 */
export const MAX_PAGE_CHARS = 1024 * 1024;
/** The largest file the edit tools read whole and rewrite (file_read pages through any size). */
export const WHOLE_READ_LIMIT = 32 * 1024 * 1024;
/** How much of the file is read at a time while the lines are counted. */
const CHUNK_BYTES = 64 * 1024;
const MAX_LISTING = 1000;

export default defineBuiltin({
  spec: {
    name: 'file_read',
    description: [
      'Read a text file in the working directory, or list a directory.',
      'A file comes back as its exact text (line endings kept) from line `offset` (1-based, default 1), at most `limit` lines (default 2000) and at most 1 MiB of text (1,048,576 characters); `truncated` says more lines follow, and `total_lines` how many there are, so a long file can be read in pages: the next page starts at `end_line` + 1. A single line longer than 1 MiB comes back cut, and `line_cut` says so.',
      'A directory comes back as its entries (name, type, size), up to 1000. Binary files, FIFOs, devices and files with several hard links (unless config allow_hardlinks) are refused. Paths are relative to the working directory; anything that resolves outside it (through `..`, an absolute path or a symlink, also one swapped in while the file is opened) is refused.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'File or directory, relative to the working directory.' },
        offset: { type: 'integer', minimum: 1, default: 1, description: 'First line to return (1-based).' },
        limit: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 2000, description: 'Most lines to return.' },
      },
    },
  },
  configSchema: FILE_ACCESS_CONFIG_SCHEMA,
  create(host) {
    const guard = new PathGuard(host.workDir);
    const access = fileAccess(host.config);
    return {
      async execute(args) {
        const { path, offset, limit } = args;
        const target = guarded(guard, path);
        if (isFailure(target)) return target;
        let opened: OpenedEntry;
        try {
          opened = await openForRead(guard, target.absolute, path, access, true);
        } catch (err) {
          return fsFailure(err, path);
        }
        try {
          if (opened.info.isDirectory()) return await listDirectory(opened.self, target.relative);
          return await readPage(opened.handle, target.relative, opened.info.size, offset, limit);
        } catch (err) {
          return fsFailure(err, path);
        } finally {
          await opened.handle.close().catch(() => undefined);
        }
      },
    };
  },
});

/** Lists the opened directory through its descriptor's own path, so a swapped path cannot redirect the listing. */
async function listDirectory(self: string, relative: string): Promise<ToolResult> {
  const dirents = await readdir(self, { withFileTypes: true });
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const entries = [];
  for (const d of dirents.slice(0, MAX_LISTING)) {
    const type = d.isDirectory() ? 'directory' : d.isSymbolicLink() ? 'symlink' : d.isFile() ? 'file' : 'other';
    const entry: { name: string; type: string; size?: number } = { name: d.name, type };
    if (type === 'file') entry.size = (await lstat(`${self}/${d.name}`).catch(() => undefined))?.size ?? 0;
    entries.push(entry);
  }
  return ok({ path: relative, type: 'directory', entries, truncated: dirents.length > MAX_LISTING });
}

/**
 * Reads the file in chunks, keeping only the page's lines (their endings exactly as written) and counting
 * the rest, so memory stays within MAX_PAGE_CHARS plus a chunk for any file, also one with no line breaks.
 */
async function readPage(handle: FileHandle, relative: string, size: number, offset: number, limit: number): Promise<ToolResult> {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  const decoder = new StringDecoder('utf8');
  let content = '';
  let chosen = 0;
  /** Where the line in progress starts in `content`, to take it back if it would pass the budget. */
  let lineStart = 0;
  /** The page's one line, longer than the budget, was cut. */
  let cut = false;
  /** The page is full: later lines are only counted. */
  let full = false;
  let line = 1;
  let lineStarted = false;
  /** A piece of line `line` (all of it, or up to a chunk's end), `ends` when it holds the line break. */
  const take = (piece: string, ends: boolean) => {
    if (!full && line >= offset) {
      if (!lineStarted) {
        if (chosen === limit) full = true;
        lineStart = content.length;
      }
      if (!full && !cut) {
        if (content.length + piece.length <= MAX_PAGE_CHARS) content += piece;
        else if (chosen > 0) {
          content = content.slice(0, lineStart);
          full = true;
        } else {
          content += piece.slice(0, MAX_PAGE_CHARS - content.length);
          cut = true;
        }
      }
      if (ends && !full) {
        chosen++;
        if (cut) full = true;
      }
    }
    lineStarted = !ends;
    if (ends) line++;
  };
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    if (position === 0 && looksBinary(chunk.subarray(0, Math.min(bytesRead, 8000)))) return binaryFailure(relative, size);
    position += bytesRead;
    const text = decoder.write(chunk.subarray(0, bytesRead));
    for (let from = 0; from < text.length; ) {
      const newline = text.indexOf('\n', from);
      const to = newline < 0 ? text.length : newline + 1;
      take(full ? '' : text.slice(from, to), newline >= 0);
      from = to;
    }
  }
  const rest = decoder.end();
  if (rest) take(rest, false);
  // The last line has no line break: it counts all the same.
  if (lineStarted) take('', true);
  const total = line - 1;
  if (offset > 1 && offset > total) {
    return fail('FORGE_FILE_RANGE', `offset ${offset} is past the end of "${relative}" (${total} lines)`, `use an offset from 1 to ${Math.max(total, 1)}`);
  }
  const endLine = chosen ? offset + chosen - 1 : 0;
  return ok({
    path: relative,
    type: 'file',
    content,
    start_line: chosen ? offset : 0,
    end_line: endLine,
    total_lines: total,
    truncated: endLine < total,
    size,
    ...(cut ? { line_cut: endLine, note: `line ${endLine} is longer than ${MAX_PAGE_CHARS} characters: only its start is shown` } : {}),
  });
}

function binaryFailure(relative: string, size: number): ToolResult {
  return fail('FORGE_FILE_BINARY', `"${relative}" is a binary file (${size} bytes)`, 'file_read returns text only');
}
