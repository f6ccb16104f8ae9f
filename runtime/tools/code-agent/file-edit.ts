import { PathGuard } from '../../guard/path-guard.ts';
import { writeVerified } from '../../guard/verified-open.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { FILE_ACCESS_CONFIG_SCHEMA, fileAccess } from './file-access-config.ts';
import { readTextFile } from './text-file.ts';
import { applyEdit, EDIT_SCHEMA, unifiedDiff } from './text-edits.ts';

export default defineBuiltin({
  spec: {
    name: 'file_edit',
    description: [
      'Replace an exact piece of text in a file: `old_string` must occur exactly once (set `replace_all` to replace every occurrence).',
      'No match, or several matches without replace_all, is an error that gives the line numbers (and points out a match that differs only in whitespace); the file is then left untouched.',
      'A file with Windows line endings matches text written with "\\n". Returns the number of replacements and a unified diff (hunk headers, 3 lines of context).',
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    inputSchema: {
      type: 'object',
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'File to edit, relative to the working directory.' },
        ...EDIT_SCHEMA.properties,
      },
    },
  },
  configSchema: FILE_ACCESS_CONFIG_SCHEMA,
  create(host) {
    const guard = new PathGuard(host.workDir);
    const access = fileAccess(host.config);
    return {
      async execute(args) {
        const { path, ...edit } = args;
        const target = guarded(guard, path);
        if (isFailure(target)) return target;
        const file = await readTextFile(guard, target, path, access);
        if (isFailure(file)) return file;
        const outcome = applyEdit(file.text, edit, `"${target.relative}"`);
        if (!outcome.ok) return fail(outcome.code, outcome.message, outcome.hint);
        try {
          await writeVerified(guard, target.absolute, path, outcome.content, access);
        } catch (err) {
          return fsFailure(err, path);
        }
        return ok({ path: target.relative, replacements: outcome.replacements, diff: unifiedDiff(target.relative, file.text, outcome.content) });
      },
    };
  },
});
