/**
 * The runtime scheduler: checks the tasks from forge.yaml and those set at
 * run time (re-read from .forge/ on every check, so schedule_set and
 * schedule_delete take effect without a restart), fires the ones that are
 * due through `onFire` (the agent loop connects it to the LLM), and records
 * every firing in the history.
 *
 * - A task is first due at its next time after the scheduler sees it; runs
 *   missed while the agent was down are not caught up.
 * - A check that comes late fires a due task once, not once per missed time.
 * - A task whose previous firing is still running is recorded as skipped.
 * - Due times are claimed through the state store: with a shared store
 *   (replicas), each due time fires on exactly one of them.
 *
 * The clock is injectable: tests drive `tick()` with a fake time.
 */
import type { Logger } from '../tools/model.ts';
import { OutageNotice } from '../outage-notice.ts';
import { StateUnavailableError } from '../store-unavailable.ts';
import type { ScheduleEntry, ScheduleRecords } from '../state/store.ts';
import { parseSchedule, type Schedule } from './schedule-expression.ts';
import { ScheduleStore } from './schedule-store.ts';
import { scheduleKey, type FiringRecord, type ScheduledTask } from './scheduled-task.ts';

export interface Firing {
  /** The time the task was due. */
  scheduledFor: Date;
  firedAt: Date;
}

export interface SchedulerOptions {
  workDir: string;
  /** Where runtime tasks, due times and history live (default: files under the work dir). */
  store?: ScheduleRecords;
  configTasks?: readonly ScheduledTask[];
  /** Runs a due task (the agent loop); a throw or rejection is recorded as a failed firing. */
  onFire?: (task: ScheduledTask, firing: Firing) => unknown;
  clock?: () => Date;
  /** How often start() checks for due tasks. */
  pollMs?: number;
  log?: Logger;
}

interface ParsedTask {
  signature: string;
  schedule: Schedule;
}

export class Scheduler {
  private readonly store: ScheduleRecords;
  private readonly parsed = new Map<string, ParsedTask>();
  private readonly running = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly warned = new Set<string>();
  private readonly clock: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** Checks that fail (the state store is away) warn once, not once a second, and say when they work again. */
  private readonly checks: OutageNotice;

  constructor(private readonly options: SchedulerOptions) {
    this.store = options.store ?? new ScheduleStore(options.workDir);
    this.clock = options.clock ?? (() => new Date());
    this.checks = new OutageNotice(options.log, { failing: 'scheduler: cannot check scheduled tasks', meanwhile: 'checks go on every second', back: 'scheduler: checking scheduled tasks again' });
  }

  /** Checks every task once and starts the firings that are due (and claimed here). */
  async tick(): Promise<void> {
    const now = this.clock();
    const tasks = [...(this.options.configTasks ?? []), ...(await this.runtimeTasks())];
    const byKey = new Map<string, ScheduledTask>();
    const entries: ScheduleEntry[] = [];
    for (const task of tasks) {
      const key = scheduleKey(task);
      const parsed = this.parse(key, task);
      if (!parsed) continue;
      byKey.set(key, task);
      entries.push({ key, ...parsed });
    }
    for (const key of this.parsed.keys()) if (!byKey.has(key)) this.parsed.delete(key);
    for (const { key, scheduledFor } of await this.store.claimDue(entries, now)) {
      const task = byKey.get(key);
      if (task) this.fire(task, scheduledFor, now);
    }
  }

  /** When each known task is next due (after at least one tick). */
  nextRuns(): Record<string, string | undefined> {
    return this.store.nextDue();
  }

  /** Resolves when every firing started so far has finished and been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  start(): void {
    if (this.timer) return;
    const check = () => {
      this.checking ??= this.tick()
        .then(
          () => this.checks.succeeded(),
          (err: unknown) => this.checks.failed(err),
        )
        .finally(() => (this.checking = undefined));
    };
    check();
    this.timer = setInterval(check, this.options.pollMs ?? 1000);
  }

  /** Stops checking and waits for running firings to be recorded. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
    await this.idle();
  }

  private async runtimeTasks(): Promise<ScheduledTask[]> {
    try {
      return await this.store.runtimeTasks();
    } catch (err) {
      // The store is away: the whole check fails (claiming would too), once in the log per outage.
      if (err instanceof StateUnavailableError) throw err;
      this.warnOnce('store', `scheduler: schedules set at run time are unreadable: ${(err as Error).message}`);
      return [];
    }
  }

  private parse(key: string, task: ScheduledTask): ParsedTask | undefined {
    const signature = JSON.stringify([task.cron, task.timezone ?? null]);
    const existing = this.parsed.get(key);
    if (existing?.signature === signature) return existing;
    try {
      const parsed = { signature, schedule: parseSchedule(task.cron, task.timezone) };
      this.parsed.set(key, parsed);
      return parsed;
    } catch (err) {
      this.warnOnce(`${key}:${signature}`, `scheduler: task "${task.id}" is skipped: ${(err as Error).message}`);
      this.parsed.delete(key);
      return undefined;
    }
  }

  private fire(task: ScheduledTask, scheduledFor: Date, firedAt: Date): void {
    const key = scheduleKey(task);
    const base = { id: task.id, source: task.source, scheduled_for: scheduledFor.toISOString(), fired_at: firedAt.toISOString() };
    if (this.running.has(key)) {
      this.record({ ...base, duration_ms: 0, status: 'skipped', error: 'the previous firing was still running' });
      return;
    }
    this.running.add(key);
    const started = performance.now();
    const firing = (async () => {
      let record: FiringRecord;
      try {
        if (this.options.onFire) await this.options.onFire(task, { scheduledFor, firedAt });
        record = { ...base, duration_ms: Math.round(performance.now() - started), status: this.options.onFire ? 'ok' : 'fired' };
      } catch (err) {
        record = { ...base, duration_ms: Math.round(performance.now() - started), status: 'failed', error: err instanceof Error ? err.message : String(err) };
      }
      this.running.delete(key);
      await this.record(record);
    })();
    this.track(firing);
  }

  private record(record: FiringRecord): Promise<void> {
    const writing = this.store.appendHistory(record).catch((err: unknown) => this.options.log?.warn(`scheduler: cannot record a firing of "${record.id}": ${(err as Error).message}`));
    this.track(writing);
    return writing;
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.log?.warn(message);
  }
}
