/**
 * A scheduled task: run `task` (an instruction for the agent) whenever
 * `cron` comes due. Tasks come from forge.yaml (read-only) or are set at run
 * time by schedule_set (kept under .forge/ in the work dir).
 */
export interface ScheduledTask {
  id: string;
  /** 5-field cron, a nickname (@hourly, @daily, ...) or `@every <duration>`. */
  cron: string;
  task: string;
  /** IANA time zone the cron fields are read in; UTC when absent. */
  timezone?: string;
  source: 'config' | 'runtime';
  /** When schedule_set created it (runtime tasks). */
  created_at?: string;
  updated_at?: string;
}

/** A schedule's key among all of them (forge.yaml's and run-time ones may share an id): its due times are kept under it. */
export function scheduleKey(task: Pick<ScheduledTask, 'source' | 'id'>): string {
  return `${task.source}:${task.id}`;
}

export const SCHEDULE_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

/** What one firing of a task left in the history. */
export interface FiringRecord {
  id: string;
  source: ScheduledTask['source'];
  /** The time the task was due. */
  scheduled_for: string;
  fired_at: string;
  duration_ms: number;
  /**
   * fired: recorded with no handler attached; ok / failed: what the handler
   * (the agent) did; skipped: the previous firing of the task was still running.
   */
  status: 'fired' | 'ok' | 'failed' | 'skipped';
  error?: string;
}
