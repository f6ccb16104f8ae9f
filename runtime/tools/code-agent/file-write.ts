import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileNoFollow } from '../../guard/no-follow-write.ts';
import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';

export default defineBuiltin({
  spec: {
    name: 'file_write',
    description: [
      'Write a text file in the working directory, replacing it whole if it exists; missing parent directories are created.',
      'Returns the path, whether the file was `created` or `updated`, and the bytes written (UTF-8). An existing file keeps its permissions.',
      'Paths resolving outside the working directory (through `..`, an absolute path or a symlink) are refused, and a symlink is never written through.',
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    inputSchema: {
      type: 'object',
      required: ['path', 'content'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'File to write, relative to the working directory.' },
        content: { type: 'string', description: 'The whole new content of the file.' },
      },
    },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    return {
      async execute(args) {
        const { path, content } = args as { path: string; content: string };
        const target = guarded(guard, path);
        if (isFailure(target)) return target;
        const existing = await stat(target.absolute).catch(() => undefined);
        if (existing?.isDirectory()) return fail('FORGE_FILE_IS_DIRECTORY', `"${path}" is a directory`, 'give a file path');
        try {
          await mkdir(dirname(target.absolute), { recursive: true });
          await writeFileNoFollow(target.absolute, content);
        } catch (err) {
          return fsFailure(err, path);
        }
        return ok({ path: target.relative, action: existing ? 'updated' : 'created', bytes: Buffer.byteLength(content) });
      },
    };
  },
});
