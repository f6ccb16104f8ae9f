import { didYouMean } from '../../suggest.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { ID_SCHEMA, readOnlyFailure, scheduleAccess, storeFailure } from './schedule-common.ts';

export default defineBuiltin({
  spec: {
    name: 'schedule_delete',
    description: 'Delete a recurring task set with schedule_set. Tasks defined in forge.yaml are read-only and cannot be deleted here; an unknown id is an error (with the closest id, if any). Its history is kept.',
    category: 'builtin',
    tags: ['write'],
    inputSchema: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: ID_SCHEMA } },
  },
  create(host) {
    const access = scheduleAccess(host);
    return {
      async execute(args) {
        const { id } = args;
        if (access.configTasks.some((t) => t.id === id)) return readOnlyFailure(id, 'deleted');
        try {
          if (await access.store.deleteTask(id)) return ok({ id, deleted: true });
          const known = (await access.allTasks()).map((t) => t.id);
          return fail('FORGE_SCHEDULE_UNKNOWN', `no schedule with id "${id}"`, didYouMean(id, known) ?? (known.length ? `the schedules are: ${known.join(', ')}` : 'there are no schedules'));
        } catch (err) {
          return storeFailure(err);
        }
      },
    };
  },
});
