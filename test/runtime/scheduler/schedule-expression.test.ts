import { describe, expect, it } from 'vitest';
import { parseSchedule, ScheduleExpressionError, upcoming } from '../../../runtime/scheduler/schedule-expression.ts';

const at = (iso: string) => new Date(iso);

describe('parseSchedule', () => {
  it.each([
    ['*/15 * * * *', undefined, '2025-01-01T10:07:00Z', ['2025-01-01T10:15:00.000Z', '2025-01-01T10:30:00.000Z']],
    ['0 9 * * 1-5', undefined, '2025-01-03T10:00:00Z', ['2025-01-06T09:00:00.000Z', '2025-01-07T09:00:00.000Z']],
    ['0 9 * * *', 'Europe/Paris', '2025-01-01T00:00:00Z', ['2025-01-01T08:00:00.000Z', '2025-01-02T08:00:00.000Z']],
    ['0 9 * * *', 'Europe/Paris', '2025-07-01T00:00:00Z', ['2025-07-01T07:00:00.000Z', '2025-07-02T07:00:00.000Z']],
    ['@hourly', undefined, '2025-01-01T10:07:00Z', ['2025-01-01T11:00:00.000Z', '2025-01-01T12:00:00.000Z']],
    ['@daily', undefined, '2025-01-01T10:07:00Z', ['2025-01-02T00:00:00.000Z', '2025-01-03T00:00:00.000Z']],
    ['@midnight', undefined, '2025-01-01T10:07:00Z', ['2025-01-02T00:00:00.000Z', '2025-01-03T00:00:00.000Z']],
    ['@weekly', undefined, '2025-01-01T10:07:00Z', ['2025-01-05T00:00:00.000Z', '2025-01-12T00:00:00.000Z']],
    ['@monthly', undefined, '2025-01-15T00:00:00Z', ['2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']],
    ['@yearly', undefined, '2025-06-01T00:00:00Z', ['2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']],
    ['@annually', undefined, '2025-06-01T00:00:00Z', ['2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']],
    ['@every 10m', undefined, '2025-01-01T10:07:30Z', ['2025-01-01T10:17:30.000Z', '2025-01-01T10:27:30.000Z']],
    ['@every 1h30m', undefined, '2025-01-01T10:00:00Z', ['2025-01-01T11:30:00.000Z', '2025-01-01T13:00:00.000Z']],
    ['@every 45s', undefined, '2025-01-01T10:00:00Z', ['2025-01-01T10:00:45.000Z', '2025-01-01T10:01:30.000Z']],
    ['@every 2d', undefined, '2025-01-01T10:00:00Z', ['2025-01-03T10:00:00.000Z', '2025-01-05T10:00:00.000Z']],
  ])('%s (%s) after %s', (expression, timezone, from, expected) => {
    expect(upcoming(parseSchedule(expression, timezone), at(from), 2).map((d) => d.toISOString())).toEqual(expected);
  });

  it.each([
    ['* * * * * *', /not a valid cron expression/],
    ['61 * * * *', /Invalid value for minute/],
    ['every day', /not a valid cron expression/],
    ['@sometimes', /unknown schedule nickname/],
    ['@every', /not a valid interval/],
    ['@every 10 minutes', /not a valid interval/],
    ['@every 0m', /interval of zero/],
  ])('refuses %j with a clear message and a hint', (expression, message) => {
    let caught: unknown;
    try {
      parseSchedule(expression);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ScheduleExpressionError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as ScheduleExpressionError).hint).toBeTruthy();
  });

  it('refuses an unknown time zone with the closest name', () => {
    expect(() => parseSchedule('@daily', 'Europe/Pariss')).toThrow(/unknown time zone "Europe\/Pariss"/);
    try {
      parseSchedule('@daily', 'Europe/Pariss');
    } catch (err) {
      expect((err as ScheduleExpressionError).hint).toBe('did you mean "Europe/Paris"?');
    }
  });
});
