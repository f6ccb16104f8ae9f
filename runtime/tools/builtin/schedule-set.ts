import { parseSchedule, ScheduleExpressionError, upcoming } from '../../scheduler/schedule-expression.ts';
import { MAX_RUNTIME_SCHEDULES } from '../../scheduler/schedule-store.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { ID_SCHEMA, readOnlyFailure, scheduleAccess, storeFailure } from './schedule-common.ts';

export default defineBuiltin({
  spec: {
    name: 'schedule_set',
    description: [
      'Create or replace a recurring task: at each time `cron` comes due, the agent runs `task` (an instruction, as if a person had sent it).',
      '`cron` is 5-field cron ("minute hour day-of-month month day-of-week", e.g. "0 9 * * 1-5"), a nickname (@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually), or "@every <duration>" (30s, 10m, 1h30m, 2d: an interval from the previous run). Times are read in `timezone` (IANA, default UTC).',
      `Schedules set here persist in .forge/schedules.json in the working directory (or in the state store replicas share); those defined in forge.yaml are read-only. At most ${MAX_RUNTIME_SCHEDULES}. Returns the task and its next three run times.`,
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    inputSchema: {
      type: 'object',
      required: ['id', 'cron', 'task'],
      additionalProperties: false,
      properties: {
        id: ID_SCHEMA,
        cron: { type: 'string', minLength: 1, description: 'When to run: cron, a nickname or @every <duration>.' },
        task: { type: 'string', minLength: 1, maxLength: 10_000, description: 'What the agent should do each time.' },
        timezone: { type: 'string', minLength: 1, maxLength: 128, description: 'IANA time zone for the cron fields (default UTC).' },
      },
    },
  },
  create(host) {
    const access = scheduleAccess(host);
    return {
      async execute(args) {
        const { id, cron, task, timezone } = args;
        if (access.configTasks.some((t) => t.id === id)) return readOnlyFailure(id, 'changed');
        let schedule;
        try {
          schedule = parseSchedule(cron, timezone);
        } catch (err) {
          if (err instanceof ScheduleExpressionError) return fail('FORGE_SCHEDULE_CRON', err.message, err.hint);
          throw err;
        }
        try {
          const { created, task: saved } = await access.store.saveTask({ id, cron, task, ...(timezone ? { timezone } : {}) }, MAX_RUNTIME_SCHEDULES);
          const nextRuns = upcoming(schedule, new Date(), 3).map((d) => d.toISOString());
          return ok({ ...saved, created, next_runs: nextRuns });
        } catch (err) {
          return storeFailure(err);
        }
      },
    };
  },
});
