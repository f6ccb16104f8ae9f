/**
 * When a store's housekeeping sweeps run: hourly, and a first one within a
 * few minutes of the start. Not at the start, where it would compete with
 * the first requests; and not only after an hour, or a replica replaced more
 * often than that (deploys, autoscaling) would never sweep. The first falls
 * at a random moment in those minutes, so replicas started together do not
 * all sweep at once.
 */
export const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** The first sweep comes at most this long after the start (or after one interval, if shorter). */
export const FIRST_SWEEP_WITHIN_MS = 5 * 60 * 1000;

export interface SweepSchedule {
  stop(): void;
}

export function scheduleSweeps(sweep: () => void, everyMs = SWEEP_EVERY_MS, random: () => number = Math.random): SweepSchedule {
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(
    () => {
      sweep();
      interval = setInterval(sweep, everyMs);
      interval.unref();
    },
    Math.floor(random() * Math.min(everyMs, FIRST_SWEEP_WITHIN_MS)),
  );
  first.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(interval);
    },
  };
}
