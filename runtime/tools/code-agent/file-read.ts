import { lstat, readdir, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { PathGuard } from '../../guard/path-guard.ts';
import { openForRead, type OpenedEntry } from '../../guard/verified-open.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure, looksBinary } from '../fs-results.ts';
import { fail, ok, type ToolResult } from '../model.ts';
import { FILE_ACCESS_CONFIG_SCHEMA, fileAccess } from './file-access-config.ts';

/** Files up to this size are read whole, so the text comes back byte for byte (line endings kept). */
export const WHOLE_READ_LIMIT = 32 * 1024 * 1024;
const MAX_LISTING = 1000;

export default defineBuiltin({
  spec: {
    name: 'file_read',
    description: [
      'Read a text file in the working directory, or list a directory.',
      'A file comes back as its exact text (line endings kept) from line `offset` (1-based, default 1), at most `limit` lines (default 2000); `truncated` says more lines follow, and `total_lines` how many there are, so a long file can be read in pages.',
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
          return opened.info.size <= WHOLE_READ_LIMIT
            ? await readWhole(opened.handle, target.relative, offset, limit)
            : await readStreaming(opened.handle, target.relative, opened.info.size, offset, limit);
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

async function readWhole(handle: FileHandle, relative: string, offset: number, limit: number): Promise<ToolResult> {
  const bytes = await handle.readFile();
  if (looksBinary(bytes)) return binaryFailure(relative, bytes.length);
  const lines = bytes.toString('utf8').split(/(?<=\n)/);
  if (lines.length === 1 && lines[0] === '') lines.pop();
  return page(relative, lines, lines.length, offset, limit, bytes.length, '');
}

/** Past WHOLE_READ_LIMIT the file is read line by line; lines come back joined with "\n". */
async function readStreaming(handle: FileHandle, relative: string, size: number, offset: number, limit: number): Promise<ToolResult> {
  const first = Buffer.alloc(8000);
  await handle.read(first, 0, first.length, 0);
  if (looksBinary(first)) return binaryFailure(relative, size);
  const selected: string[] = [];
  let total = 0;
  const lines = createInterface({ input: handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false }), crlfDelay: Infinity });
  for await (const line of lines) {
    total++;
    if (total >= offset && selected.length < limit) selected.push(line + '\n');
  }
  return page(relative, selected, total, offset, limit, size, 'the file is large: it was read line by line and line endings are shown as "\\n"', true);
}

function page(relative: string, lines: string[], total: number, offset: number, limit: number, size: number, note: string, preselected = false): ToolResult {
  if (offset > 1 && offset > total) {
    return fail('FORGE_FILE_RANGE', `offset ${offset} is past the end of "${relative}" (${total} lines)`, `use an offset from 1 to ${Math.max(total, 1)}`);
  }
  const chosen = preselected ? lines : lines.slice(offset - 1, offset - 1 + limit);
  const endLine = chosen.length ? offset + chosen.length - 1 : 0;
  return ok({
    path: relative,
    type: 'file',
    content: chosen.join(''),
    start_line: chosen.length ? offset : 0,
    end_line: endLine,
    total_lines: total,
    truncated: endLine < total,
    size,
    ...(note ? { note } : {}),
  });
}

function binaryFailure(relative: string, size: number): ToolResult {
  return fail('FORGE_FILE_BINARY', `"${relative}" is a binary file (${size} bytes)`, 'file_read returns text only');
}
