import { parseSchedule } from '../../scheduler/schedule-expression.ts';
import { ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { scheduleAccess, storeFailure } from './schedule-common.ts';

export default defineBuiltin({
  spec: {
    name: 'schedule_list',
    description: [
      'List the recurring tasks: those defined in forge.yaml (source "config", read-only) and those set with schedule_set (source "runtime").',
      'Each comes with its cron, time zone, task, next run time and the time and status of its last run (from the history).',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: { type: 'object', additionalProperties: false, properties: {} },
  },
  create(host) {
    const access = scheduleAccess(host);
    return {
      async execute() {
        try {
          const tasks = await access.allTasks();
          const history = await access.store.history();
          const now = new Date();
          return ok({
            tasks: tasks.map((task) => {
              let next: string | undefined;
              let problem: string | undefined;
              try {
                next = parseSchedule(task.cron, task.timezone).nextAfter(now)?.toISOString();
              } catch (err) {
                problem = (err as Error).message;
              }
              const last = history.find((h) => h.id === task.id && h.source === task.source);
              return {
                ...task,
                timezone: task.timezone ?? 'UTC',
                next_run: next ?? null,
                ...(problem ? { problem } : {}),
                last_run: last ? { fired_at: last.fired_at, status: last.status } : null,
              };
            }),
          });
        } catch (err) {
          return storeFailure(err);
        }
      },
    };
  },
});
