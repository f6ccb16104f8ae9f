import { lstat, readdir, type FileHandle } from 'node:fs/promises';
import { openForRead, type OpenedEntry } from '../../guard/verified-open.ts';
import { join } from 'node:path';
import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure, looksBinary } from '../fs-results.ts';
import { fail, ok } from '../model.ts';

const MAX_ENTRIES = 2000;
/** How much of a file looksBinary() inspects. */
const BINARY_CHECK_BYTES = 8000;

export default defineBuiltin({
  spec: {
    name: 'local_file_browser',
    description: [
      'Development only: browse the working directory. `list` a directory (every entry, hidden ones included, with type, size and modification time; symlinks with their target) or `read` a text file (at most `max_bytes`, default 256 KiB, with a truncated flag). Not available in production builds.',
      'Paths go through the same guard as the file tools: anything resolving outside the working directory is refused.',
    ].join('\n'),
    category: 'dev',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['action'],
      additionalProperties: false,
      properties: {
        action: { enum: ['list', 'read'], description: 'list a directory, or read a file.' },
        path: { type: 'string', minLength: 1, default: '.', description: 'Relative to the working directory.' },
        max_bytes: { type: 'integer', minimum: 1, maximum: 16 * 1024 * 1024, default: 256 * 1024, description: 'read: most bytes to return.' },
      },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    return {
      async execute(args) {
        const { action, path, max_bytes: maxBytes } = args;
        const target = guarded(guard, path);
        if (isFailure(target)) return target;
        let opened: OpenedEntry;
        try {
          // A verified descriptor: nothing swapped in after the check is listed or read; FIFOs and devices are refused.
          opened = await openForRead(guard, target.absolute, path, { allowHardlinks: true }, true);
        } catch (err) {
          return fsFailure(err, path);
        }
        try {
          const info = opened.info;
          if (action === 'list') {
            if (!info.isDirectory()) return fail('FORGE_FILE_NOT_DIRECTORY', `"${path}" is not a directory`, 'use action "read" for a file');
            const dirents = (await readdir(opened.self, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
            const entries = [];
            for (const d of dirents.slice(0, MAX_ENTRIES)) {
              const full = join(opened.self, d.name);
              const entryInfo = await lstat(full).catch(() => undefined);
              entries.push({
                name: d.name,
                type: d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other',
                ...(d.isFile() && entryInfo ? { size: entryInfo.size } : {}),
                ...(entryInfo ? { modified: entryInfo.mtime.toISOString() } : {}),
              });
            }
            return ok({ path: target.relative, entries, truncated: dirents.length > MAX_ENTRIES });
          }
          if (info.isDirectory()) return fail('FORGE_FILE_IS_DIRECTORY', `"${path}" is a directory`, 'use action "list"');
          // Only the part returned is read (at least what the binary check looks at), not the whole file.
          const head = await readHead(opened.handle, Math.min(info.size, Math.max(maxBytes, BINARY_CHECK_BYTES)));
          if (looksBinary(head)) return fail('FORGE_FILE_BINARY', `"${path}" is a binary file (${info.size} bytes)`);
          return ok({ path: target.relative, size: info.size, content: head.subarray(0, maxBytes).toString('utf8'), truncated: info.size > maxBytes });
        } catch (err) {
          return fsFailure(err, path);
        } finally {
          await opened.handle.close().catch(() => undefined);
        }
      },
    };
  },
});

async function readHead(handle: FileHandle, bytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(bytes);
  const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
  return buffer.subarray(0, bytesRead);
}
