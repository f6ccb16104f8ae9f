/**
 * How long the state stores keep what nothing else bounds, written with
 * its unit — 30d, 12h, 90m — since a retention is counted in days, which
 * durations elsewhere (ms, s, m, bounded by what a timer holds) do not reach.
 *
 * FORGE_TASK_RETENTION: a finished A2A task (completed, failed, canceled,
 * rejected) after its last update; default 30 days, `off` (or 0) keeps them
 * forever. The `file:` store bounds its tasks by count and size instead
 * (memory-tasks.ts).
 *
 * FORGE_CONVERSATION_RETENTION: a conversation after its last turn; off by
 * default. A conversation is never finished — its client may come back
 * with its context id at any time, and finds it empty once deleted — so
 * only the operator can say how long is long enough.
 */
import { StateConfigError } from './store.ts';

export const DEFAULT_TASK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Shorter than this is a typo (a unit left out, 30s for 30d) more likely than a wish. */
const MIN_RETENTION_MS = 60_000;
/**
 * Longer than this is no retention (off says keep them); much longer, and the sweep's cut-off falls before
 * what Postgres can count back to (4713 BC), failing every sweep with "timestamp out of range".
 */
const MAX_RETENTION_DAYS = 36_500;

const UNIT_MS: Record<string, number> = { m: 60_000, h: 60 * 60_000, d: 24 * 60 * 60_000 };

/** The finished tasks' retention in milliseconds, or undefined: they are kept forever. */
export function taskRetentionFrom(env: NodeJS.ProcessEnv): number | undefined {
  return retentionFrom('FORGE_TASK_RETENTION', env, DEFAULT_TASK_RETENTION_MS, 'finished tasks');
}

/** The conversations' retention in milliseconds, or undefined (the default): they are kept forever. */
export function conversationRetentionFrom(env: NodeJS.ProcessEnv): number | undefined {
  return retentionFrom('FORGE_CONVERSATION_RETENTION', env, undefined, 'conversations');
}

function retentionFrom(variable: string, env: NodeJS.ProcessEnv, unset: number | undefined, kept: string): number | undefined {
  const text = env[variable]?.trim();
  if (!text) return unset;
  if (/^(off|0)$/i.test(text)) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(m|h|d)$/i.exec(text);
  const ms = m ? Math.round(Number(m[1]) * UNIT_MS[m[2].toLowerCase()]) : undefined;
  if (ms === undefined || ms < MIN_RETENTION_MS) {
    throw new StateConfigError(`${variable}="${text}" is not a duration of at least 1m, nor off`, `write it with its unit, e.g. 30d, 12h or 90m; off keeps ${kept} forever`);
  }
  if (ms > MAX_RETENTION_DAYS * UNIT_MS.d) {
    throw new StateConfigError(`${variable}="${text}" is longer than 100 years (${MAX_RETENTION_DAYS}d)`, `off keeps ${kept} forever; a retention is at most ${MAX_RETENTION_DAYS}d`);
  }
  return ms;
}

/** The units a retention is written in, largest first. */
const WHOLE_UNITS: [string, number][] = [
  ['d', UNIT_MS.d],
  ['h', UNIT_MS.h],
  ['m', UNIT_MS.m],
];

/**
 * A retention as a log line says it, exactly, in the largest unit that counts it whole: 30d, 36h (1.5d),
 * 90m, 90s (1.5m: rounded to minutes, it read as 2m, a retention the sweep does not use).
 */
export function retentionText(ms: number): string {
  const unit = WHOLE_UNITS.find(([, size]) => ms % size === 0);
  // Seconds take what no unit counts whole: ms / 1000 is exact to the millisecond a setting is read to.
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms / 1000}s`;
}
