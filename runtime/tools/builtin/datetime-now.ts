import { DateTime } from 'luxon';
import { isTimeZone, timeZoneHint } from '../../time-zone.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';

type Format = 'rfc3339' | 'rfc2822' | 'unix' | 'unix_ms' | 'date' | 'time' | 'custom';

const RENDER: Record<Exclude<Format, 'custom'>, (d: DateTime) => string | number> = {
  rfc3339: (d) => d.set({ millisecond: 0 }).toISO({ suppressMilliseconds: true })!,
  rfc2822: (d) => d.toRFC2822()!,
  unix: (d) => Math.floor(d.toSeconds()),
  unix_ms: (d) => d.toMillis(),
  date: (d) => d.toFormat('yyyy-MM-dd'),
  time: (d) => d.toFormat('HH:mm:ss'),
};

export default defineBuiltin({
  spec: {
    name: 'datetime_now',
    description: [
      'The current date and time in an IANA time zone (default UTC; "local" is the machine\'s zone).',
      'Formats: rfc3339 (default, e.g. 2025-03-01T09:30:00+01:00), rfc2822, unix (seconds), unix_ms, date (2025-03-01), time (09:30:00), or custom with a Luxon `pattern` (yyyy year, MM month, dd day, HH hour, mm minute, ss second, EEEE weekday name, ZZ offset, ZZZZ zone abbreviation; text in single quotes is literal).',
      'Returns `value` in that format, plus the RFC 3339 time, the zone, its UTC offset and the weekday. An unknown time zone is an error with the closest known name.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        format: { enum: ['rfc3339', 'rfc2822', 'unix', 'unix_ms', 'date', 'time', 'custom'], default: 'rfc3339', description: 'Output format.' },
        timezone: { type: 'string', minLength: 1, maxLength: 128, default: 'UTC', description: 'IANA time zone, e.g. Europe/Paris, or "local".' },
        pattern: { type: 'string', minLength: 1, description: 'With format "custom": a Luxon format pattern such as "yyyy-MM-dd HH:mm".' },
      },
    },
  },
  create: () => ({
    async execute(args) {
      const { format, timezone, pattern } = args;
      if (timezone !== 'local' && !isTimeZone(timezone)) return fail('FORGE_DATETIME_TIMEZONE', `unknown time zone "${timezone}"`, timeZoneHint(timezone));
      if (format === 'custom' && !pattern) return fail('FORGE_DATETIME_PATTERN', 'format "custom" needs a pattern', 'e.g. "yyyy-MM-dd HH:mm" or "EEEE d MMMM"');
      const now = DateTime.now().setZone(timezone === 'local' ? 'system' : timezone);
      const value = format === 'custom' ? now.toFormat(pattern!) : RENDER[format](now);
      return ok({
        value,
        rfc3339: RENDER.rfc3339(now),
        timezone: now.zoneName,
        utc_offset: now.toFormat('ZZ'),
        weekday: now.weekdayLong,
      });
    },
  }),
});
