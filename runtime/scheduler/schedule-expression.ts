/**
 * Schedule expressions: 5-field cron and the nicknames (@hourly, @daily,
 * @weekly, @monthly, @yearly, @annually, @midnight), read by croner in a
 * given IANA time zone (UTC by default); and `@every <duration>` (30s, 10m,
 * 1h30m, 2d), a fixed interval from the previous firing.
 */
import { Cron } from '../vendor/libs.ts';
import { isTimeZone, timeZoneHint } from '../time-zone.ts';
import { ForgeError } from '../diagnostics.ts';

export class ScheduleExpressionError extends ForgeError {
  constructor(message: string, hint?: string) {
    super('FORGE_SCHEDULE_CRON', message, hint);
  }
}

export interface Schedule {
  /** The first time strictly after `after` the task is due. */
  nextAfter(after: Date): Date | undefined;
  /** The expression as given. */
  readonly expression: string;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const EVERY = /^@every\s+((?:\d+[smhd])+)$/i;
const NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

export function parseSchedule(expression: string, timezone?: string): Schedule {
  const text = expression.trim();
  if (timezone !== undefined) checkTimeZone(timezone);
  const every = EVERY.exec(text);
  if (every) {
    const intervalMs = [...every[1].matchAll(/(\d+)([smhd])/gi)].reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_MS[unit.toLowerCase()], 0);
    if (intervalMs < 1000) throw new ScheduleExpressionError(`"${expression}" is an interval of zero`, 'use a positive duration such as @every 10m');
    return { expression, nextAfter: (after) => new Date(after.getTime() + intervalMs) };
  }
  if (text.toLowerCase().startsWith('@every')) {
    throw new ScheduleExpressionError(`"${expression}" is not a valid interval`, 'write @every followed by a duration such as 30s, 10m, 1h30m or 2d');
  }
  if (text.startsWith('@') && !NICKNAMES.includes(text.toLowerCase())) {
    throw new ScheduleExpressionError(`unknown schedule nickname "${text}"`, `use one of ${NICKNAMES.join(', ')} or @every <duration>`);
  }
  let cron: Cron;
  try {
    cron = new Cron(text, { paused: true, mode: '5-part', timezone: timezone ?? 'UTC' });
  } catch (err) {
    throw new ScheduleExpressionError(
      `"${expression}" is not a valid cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`,
      'use 5 fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5", or @hourly, @daily, @every 10m',
    );
  }
  return { expression, nextAfter: (after) => cron.nextRun(after) ?? undefined };
}

/** The next `count` due times after `from`. */
export function upcoming(schedule: Schedule, from: Date, count: number): Date[] {
  const out: Date[] = [];
  let at = from;
  while (out.length < count) {
    const next = schedule.nextAfter(at);
    if (!next) break;
    out.push(next);
    at = next;
  }
  return out;
}

function checkTimeZone(timezone: string): void {
  if (!isTimeZone(timezone)) throw new ScheduleExpressionError(`unknown time zone "${timezone}"`, timeZoneHint(timezone));
}
