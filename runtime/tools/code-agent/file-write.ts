import { PathGuard } from '../../guard/path-guard.ts';
import { writeVerified } from '../../guard/verified-open.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { ok } from '../model.ts';
import { FILE_ACCESS_CONFIG_SCHEMA, fileAccess } from './file-access-config.ts';

export default defineBuiltin({
  spec: {
    name: 'file_write',
    description: [
      'Write a text file in the working directory, replacing it whole if it exists; missing parent directories are created.',
      'Returns the path, whether the file was `created` or `updated`, and the bytes written (UTF-8). An existing file keeps its permissions.',
      'Paths resolving outside the working directory (through `..`, an absolute path or a symlink) are refused, and a symlink is never written through. Only regular files are written: FIFOs, devices and files with several hard links (unless config allow_hardlinks) are refused.',
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
  configSchema: FILE_ACCESS_CONFIG_SCHEMA,
  create(host) {
    const guard = new PathGuard(host.workDir);
    const access = fileAccess(host.config);
    return {
      async execute(args) {
        const { path, content } = args;
        const target = guarded(guard, path);
        if (isFailure(target)) return target;
        let created: boolean;
        try {
          ({ created } = await writeVerified(guard, target.absolute, path, content, { ...access, makeParents: true }));
        } catch (err) {
          const failure = fsFailure(err, path);
          if (failure.error.code === 'FORGE_FILE_IS_DIRECTORY') failure.error.hint = 'give a file path';
          return failure;
        }
        return ok({ path: target.relative, action: created ? 'created' : 'updated', bytes: Buffer.byteLength(content) });
      },
    };
  },
});
