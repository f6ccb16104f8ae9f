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

/** A retention as a log line says it: 30d, 12h, 90m. */
export function retentionText(ms: number): string {
  const days = ms / (24 * 60 * 60_000);
  return Number.isInteger(days) ? `${days}d` : ms % (60 * 60_000) === 0 ? `${ms / (60 * 60_000)}h` : `${Math.round(ms / 60_000)}m`;
}
