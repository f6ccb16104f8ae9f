import { PathGuard } from '../../guard/path-guard.ts';
import { defineBuiltin } from '../builtin/define.ts';
import { fsFailure, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { FILE_ACCESS_CONFIG_SCHEMA, fileAccess } from './file-access-config.ts';
import { applyPlan, PatchApplyError, verifiedPatchIo } from './patch-apply.ts';
import { planPatch } from './patch-plan.ts';
import { EDIT_SCHEMA } from './text-edits.ts';

export default defineBuiltin({
  spec: {
    name: 'file_patch',
    description: [
      'Change several files in one all-or-nothing step. Each operation is one of:',
      '  add     {op, path, content}            create a file (it must not exist; parents are created)',
      '  update  {op, path, content | edits | diff}  replace the whole text, apply exact-text edits (each old_string once unless replace_all), or apply a unified diff',
      '  delete  {op, path}                     remove a file',
      '  move    {op, path, to}                 rename a file (the destination must not exist)',
      'Operations run in order, and each sees the files as the ones before it left them. All of them are checked before anything is written; if one fails while being applied, the ones before it are rolled back. Returns each change, with a unified diff for updates.',
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    inputSchema: {
      type: 'object',
      required: ['operations'],
      additionalProperties: false,
      properties: {
        operations: {
          type: 'array',
          minItems: 1,
          maxItems: 200,
          items: {
            type: 'object',
            required: ['op', 'path'],
            additionalProperties: false,
            properties: {
              op: { enum: ['add', 'update', 'delete', 'move'], description: 'What to do.' },
              path: { type: 'string', minLength: 1, description: 'The file, relative to the working directory.' },
              to: { type: 'string', minLength: 1, description: 'move: the new path.' },
              content: { type: 'string', description: 'add, update: the whole text of the file.' },
              edits: { type: 'array', minItems: 1, items: EDIT_SCHEMA, description: 'update: exact-text edits, in order.' },
              diff: { type: 'string', minLength: 1, description: 'update: a unified diff (with @@ hunk headers) to apply.' },
            },
          },
        },
      },
    },
  },
  configSchema: FILE_ACCESS_CONFIG_SCHEMA,
  create(host) {
    const guard = new PathGuard(host.workDir);
    const access = fileAccess(host.config);
    const io = verifiedPatchIo(guard, access);
    return {
      async execute(args) {
        const { operations } = args;
        const plan = await planPatch(operations, guard, access);
        if (isFailure(plan)) return plan;
        try {
          await applyPlan(plan.steps, io);
        } catch (err) {
          if (!(err instanceof PatchApplyError)) throw err;
          const change = plan.changes[err.stepIndex];
          const cause = fsFailure(err.cause, change.path);
          const rolledBack = err.rollbackFailures.length === 0;
          return fail(
            cause.error.code,
            `operation ${err.stepIndex + 1} (${change.op} ${change.path}) failed: ${cause.error.message}; ${rolledBack ? `the ${err.stepIndex} operation(s) before it were rolled back` : 'rolling back the operations before it failed too'}`,
            rolledBack ? cause.error.hint : 'check the files named in details',
            rolledBack ? undefined : err.rollbackFailures.join('\n'),
          );
        }
        return ok({ applied: plan.changes.length, changes: plan.changes });
      },
    };
  },
});
