/** FORGE_TASK_RETENTION as the Postgres store reads it: a duration in minutes, hours or days, or off. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK_RETENTION_MS, taskRetentionFrom } from '../../../runtime/state/task-retention.ts';
import { StateConfigError } from '../../../runtime/state/store.ts';

describe('FORGE_TASK_RETENTION', () => {
  it.each([
    ['unset', undefined, DEFAULT_TASK_RETENTION_MS],
    ['empty', '  ', DEFAULT_TASK_RETENTION_MS],
    ['days', '7d', 7 * 24 * 60 * 60 * 1000],
    ['hours', '12h', 12 * 60 * 60 * 1000],
    ['minutes', '90m', 90 * 60 * 1000],
    ['off', 'off', undefined],
    ['0', '0', undefined],
  ])('reads %s', (_what, value, expected) => {
    expect(taskRetentionFrom({ FORGE_TASK_RETENTION: value })).toBe(expected);
  });

  it.each(['30', '30s', '1x', 'forever', '-1d', '0.5m'])('refuses %s, saying what it takes', (value) => {
    expect(() => taskRetentionFrom({ FORGE_TASK_RETENTION: value })).toThrow(StateConfigError);
    expect(() => taskRetentionFrom({ FORGE_TASK_RETENTION: value })).toThrow(`FORGE_TASK_RETENTION="${value}" is not a duration of at least 1m, nor off`);
  });

  // Taken, they failed every hourly sweep ("timestamp out of range": Postgres counts no further back than 4713 BC),
  // and a run of digits long enough was Infinity.
  it.each([
    ['a day past 100 years', '36501d'],
    ['ten million days', '10000000d'],
    ['more digits than a number holds', `${'9'.repeat(400)}d`],
  ])('refuses %s, pointing at off', (_what, value) => {
    const refusal = (() => {
      try {
        taskRetentionFrom({ FORGE_TASK_RETENTION: value });
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(StateConfigError);
    expect(refusal).toMatchObject({ message: `FORGE_TASK_RETENTION="${value}" is longer than 100 years (36500d)`, hint: expect.stringContaining('off keeps finished tasks forever') });
  });

  it('takes 100 years', () => {
    expect(taskRetentionFrom({ FORGE_TASK_RETENTION: '36500d' })).toBe(36500 * 24 * 60 * 60 * 1000);
  });
});
