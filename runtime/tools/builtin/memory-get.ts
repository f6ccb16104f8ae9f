import { openForRead } from '../../guard/verified-open.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { DEFAULT_MEMORY_DIR, MAX_MEMORY_FILE_BYTES, MEMORY_CONFIG_SCHEMA, openMemoryFolder } from './memory/memory-folder.ts';

export default defineBuiltin({
  spec: {
    name: 'memory_get',
    description: [
      `Read a memory file (a path inside ${DEFAULT_MEMORY_DIR}/, as memory_search returns it in \`source\`), whole or lines \`start_line\` to \`end_line\`.`,
      'Only files inside the memory folder can be read: other paths, "..", and symlinks leading out of it are refused.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'File inside the memory folder, e.g. "projects/acme.md".' },
        start_line: { type: 'integer', minimum: 1, description: 'First line (1-based).' },
        end_line: { type: 'integer', minimum: 1, description: 'Last line (inclusive).' },
      },
    },
  },
  configSchema: MEMORY_CONFIG_SCHEMA,
  create(host) {
    return {
      async execute(args) {
        const { path, start_line: startLine = 1, end_line: endLine } = args;
        const folder = await openMemoryFolder(host.workDir, host.config.dir);
        if (isFailure(folder)) return folder;
        if (!folder.guard) return fail('FORGE_FILE_NOT_FOUND', `the memory folder ${folder.display} does not exist yet`, 'nothing has been remembered');
        const target = guarded(folder.guard, path);
        if (isFailure(target)) {
          return target.error.code === 'FORGE_PATH_OUTSIDE' ? fail('FORGE_PATH_OUTSIDE', `path "${path}" is outside the memory folder ${folder.display}`, 'give a path as memory_search returns it in `source`') : target;
        }
        if (endLine !== undefined && endLine < startLine) return fail('FORGE_FILE_RANGE', `end_line ${endLine} is before start_line ${startLine}`);
        let text: string;
        try {
          // Through a verified descriptor: a swapped symlink, a FIFO or a hard link to elsewhere is refused.
          const { handle, info } = await openForRead(folder.guard, target.absolute, path, {}, true);
          try {
            if (!info.isFile()) return fail('FORGE_FILE_NOT_REGULAR', `"${path}" is not a file in the memory folder`);
            if (info.size > MAX_MEMORY_FILE_BYTES) return fail('FORGE_FILE_TOO_LARGE', `"${path}" is ${info.size} bytes; memory files up to ${MAX_MEMORY_FILE_BYTES} bytes can be read`);
            text = await handle.readFile('utf8');
          } finally {
            await handle.close();
          }
        } catch (err) {
          return fsFailure(err, path);
        }
        const lines = text.split(/\r?\n/);
        if (lines.at(-1) === '') lines.pop();
        if (startLine > Math.max(lines.length, 1)) return fail('FORGE_FILE_RANGE', `start_line ${startLine} is past the end of "${path}" (${lines.length} lines)`);
        const last = Math.min(endLine ?? lines.length, lines.length);
        return ok({ path: target.relative, content: lines.slice(startLine - 1, last).join('\n'), start_line: startLine, end_line: last, total_lines: lines.length });
      },
    };
  },
});
