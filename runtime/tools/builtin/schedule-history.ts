import { ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { ID_SCHEMA, scheduleAccess, storeFailure } from './schedule-common.ts';

export default defineBuiltin({
  spec: {
    name: 'schedule_history',
    description: [
      'Show when recurring tasks ran, newest first: the time each was due and fired, how long it took, and its status — ok or failed (with the error) when the agent ran it, fired when no agent was attached, skipped when the previous run was still going.',
      'Optionally for one task `id`; at most `limit` entries (default 20). The history keeps the last 1000 runs.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: ID_SCHEMA,
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 20, description: 'Most entries to return.' },
      },
    },
  },
  create(host) {
    const access = scheduleAccess(host);
    return {
      async execute(args) {
        const { id, limit } = args;
        try {
          return ok({ entries: await access.store.history({ id, limit }) });
        } catch (err) {
          return storeFailure(err);
        }
      },
    };
  },
});
