/** FORGE_TASK_RETENTION and FORGE_CONVERSATION_RETENTION as the Postgres store reads them: a duration in minutes, hours or days, or off. */
import { describe, expect, it } from 'vitest';
import { conversationRetentionFrom, DEFAULT_TASK_RETENTION_MS, retentionText, taskRetentionFrom } from '../../../runtime/state/retention-settings.ts';
import { StateConfigError } from '../../../runtime/state/store.ts';

describe.each([
  ['FORGE_TASK_RETENTION', taskRetentionFrom, DEFAULT_TASK_RETENTION_MS],
  // Off unless the operator says: a conversation deleted is one its client comes back to find empty.
  ['FORGE_CONVERSATION_RETENTION', conversationRetentionFrom, undefined],
])('%s', (variable, retentionFrom, unset) => {
  it.each([
    ['unset', undefined, unset],
    ['empty', '  ', unset],
    ['days', '7d', 7 * 24 * 60 * 60 * 1000],
    ['hours', '12h', 12 * 60 * 60 * 1000],
    ['minutes', '90m', 90 * 60 * 1000],
    ['off', 'off', undefined],
    ['0', '0', undefined],
  ])('reads %s', (_what, value, expected) => {
    expect(retentionFrom({ [variable]: value })).toBe(expected);
  });

  it.each(['30', '30s', '1x', 'forever', '-1d', '0.5m'])('refuses %s, saying what it takes', (value) => {
    expect(() => retentionFrom({ [variable]: value })).toThrow(StateConfigError);
    expect(() => retentionFrom({ [variable]: value })).toThrow(`${variable}="${value}" is not a duration of at least 1m, nor off`);
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
        retentionFrom({ [variable]: value });
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(StateConfigError);
    expect(refusal).toMatchObject({ message: `${variable}="${value}" is longer than 100 years (36500d)`, hint: expect.stringMatching(/^off keeps .* forever; a retention is at most 36500d$/) });
  });

  it('takes 100 years', () => {
    expect(retentionFrom({ [variable]: '36500d' })).toBe(36500 * 24 * 60 * 60 * 1000);
  });
});

// The sweep's log line says the retention it uses: 1.5m was said as 2m.
describe('a retention as the log says it', () => {
  it.each([
    ['30d', '30d'],
    ['1.5d', '36h'],
    ['12h', '12h'],
    ['1.5h', '90m'],
    ['90m', '90m'],
    ['1.5m', '90s'],
    ['1.0001m', '60.006s'],
  ])('says %s as %s', (value, said) => {
    expect(retentionText(conversationRetentionFrom({ FORGE_CONVERSATION_RETENTION: value })!)).toBe(said);
  });
});
