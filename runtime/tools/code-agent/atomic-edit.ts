import { defineBuiltin } from '../builtin/define.ts';
import { fail, ok } from '../model.ts';
import { WHOLE_READ_LIMIT } from './file-read.ts';
import { applyEdit, EDIT_SCHEMA, unifiedDiff } from './text-edits.ts';

interface ReadValue {
  path: string;
  type: string;
  content: string;
  total_lines: number;
  truncated: boolean;
  size: number;
}

/**
 * Several edits to one file as one change: the file is read once (through
 * file_read), every edit is applied in memory in order, and the result is
 * written once (through file_write) — or, if any edit fails, not at all.
 * It reaches the file only through the tools it declares in composedOf, so
 * it is bound by their path guard and by the approval given for them.
 */
export default defineBuiltin({
  spec: {
    name: 'atomic_edit',
    description: [
      'Apply several exact-text edits to one file as a single change: all of them, or none.',
      'The file is read once, the edits are applied in order (each sees the result of the ones before; each `old_string` must occur exactly once unless `replace_all`), and the file is written once. If any edit fails, the error names it and the file is left untouched.',
      'Works through file_read and file_write (confirmed once for the whole change); returns the replacements made and a unified diff.',
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    composedOf: ['file_read', 'file_write'],
    singleConfirmation: true,
    inputSchema: {
      type: 'object',
      required: ['path', 'edits'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'File to edit, relative to the working directory.' },
        edits: { type: 'array', minItems: 1, maxItems: 100, items: EDIT_SCHEMA, description: 'Edits, applied in order.' },
      },
    },
  },
  create: () => ({
    async execute(args, ctx) {
      const { path, edits } = args;
      const read = await ctx.registry.execute('file_read', { path, limit: 1_000_000 });
      if (!read.ok) return read;
      const file = read.value as ReadValue;
      if (file.type !== 'file') return fail('FORGE_FILE_IS_DIRECTORY', `"${path}" is a directory`, 'give a file path');
      if (file.size > WHOLE_READ_LIMIT || file.truncated) {
        return fail('FORGE_FILE_TOO_LARGE', `"${path}" is ${file.size} bytes; files up to ${WHOLE_READ_LIMIT} bytes can be edited`);
      }
      let content = file.content;
      let replacements = 0;
      for (const [i, edit] of edits.entries()) {
        const outcome = applyEdit(content, edit, `"${file.path}"`);
        if (!outcome.ok) {
          return fail(outcome.code, `edit ${i + 1} of ${edits.length}: ${outcome.message}; no edit was written`, outcome.hint);
        }
        content = outcome.content;
        replacements += outcome.replacements;
      }
      const written = await ctx.registry.execute('file_write', { path, content });
      if (!written.ok) return written;
      return ok({ path: file.path, edits: edits.length, replacements, diff: unifiedDiff(file.path, file.content, content) });
    },
  }),
});
