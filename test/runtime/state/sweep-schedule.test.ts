/**
 * The stores' housekeeping sweeps run hourly and a first time within five minutes of the start: a replica
 * replaced more often than hourly (deploys, autoscaling) still sweeps. Timers are vitest's fake ones: what is
 * checked is which sweeps are due at which moment, not how long anything takes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FIRST_SWEEP_WITHIN_MS, scheduleSweeps } from '../../../runtime/state/sweep-schedule.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('scheduleSweeps', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it.each([0.001, 0.5, 0.999])('sweeps once within five minutes of the start (random %s), then hourly from that sweep', (random) => {
    const sweep = vi.fn();
    const schedule = scheduleSweeps(sweep, undefined, () => random);
    // Five minutes written out, not the module's constant: an hour there would still be "within" it.
    const first = Math.floor(random * 5 * MINUTE);
    vi.advanceTimersByTime(first - 1);
    expect(sweep).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(sweep).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(HOUR - 1);
    expect(sweep).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(sweep).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(3 * HOUR);
    expect(sweep).toHaveBeenCalledTimes(5);
    schedule.stop();
  });

  it('spreads the first sweep over the first interval when that is shorter than five minutes', () => {
    const sweep = vi.fn();
    const schedule = scheduleSweeps(sweep, 1000, () => 0.75);
    vi.advanceTimersByTime(749);
    expect(sweep).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(sweep).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(sweep).toHaveBeenCalledTimes(2);
    schedule.stop();
  });

  it('stops before the first sweep and after it', () => {
    const early = vi.fn();
    scheduleSweeps(early, undefined, () => 0.5).stop();
    vi.advanceTimersByTime(3 * HOUR);
    expect(early).not.toHaveBeenCalled();

    const late = vi.fn();
    const schedule = scheduleSweeps(late, undefined, () => 0.5);
    vi.advanceTimersByTime(FIRST_SWEEP_WITHIN_MS);
    expect(late).toHaveBeenCalledTimes(1);
    schedule.stop();
    vi.advanceTimersByTime(3 * HOUR);
    expect(late).toHaveBeenCalledTimes(1);
  });
});
