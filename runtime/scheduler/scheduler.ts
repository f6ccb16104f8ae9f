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
 *
 * The clock is injectable: tests drive `tick()` with a fake time.
 */
import type { Logger } from '../tools/model.ts';
import { parseSchedule, type Schedule } from './schedule-expression.ts';
import { ScheduleStore } from './schedule-store.ts';
import type { FiringRecord, ScheduledTask } from './scheduled-task.ts';

export interface Firing {
  /** The time the task was due. */
  scheduledFor: Date;
  firedAt: Date;
}

export interface SchedulerOptions {
  workDir: string;
  configTasks?: readonly ScheduledTask[];
  /** Runs a due task (the agent loop); a throw or rejection is recorded as a failed firing. */
  onFire?: (task: ScheduledTask, firing: Firing) => unknown;
  clock?: () => Date;
  /** How often start() checks for due tasks. */
  pollMs?: number;
  log?: Logger;
}

interface TaskState {
  signature: string;
  schedule: Schedule;
  due: Date | undefined;
}

export class Scheduler {
  private readonly store: ScheduleStore;
  private readonly states = new Map<string, TaskState>();
  private readonly running = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly warned = new Set<string>();
  private readonly clock: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(private readonly options: SchedulerOptions) {
    this.store = new ScheduleStore(options.workDir);
    this.clock = options.clock ?? (() => new Date());
  }

  /** Checks every task once and starts the firings that are due. */
  async tick(): Promise<void> {
    const now = this.clock();
    const tasks = [...(this.options.configTasks ?? []), ...(await this.runtimeTasks())];
    const present = new Set<string>();
    for (const task of tasks) {
      const key = `${task.source}:${task.id}`;
      present.add(key);
      const state = this.stateFor(key, task, now);
      if (!state?.due || now < state.due) continue;
      const scheduledFor = state.due;
      let due = state.schedule.nextAfter(scheduledFor);
      if (due && due <= now) due = state.schedule.nextAfter(now);
      state.due = due;
      this.fire(task, scheduledFor, now);
    }
    for (const key of this.states.keys()) if (!present.has(key)) this.states.delete(key);
  }

  /** When each known task is next due (after at least one tick). */
  nextRuns(): Record<string, string | undefined> {
    return Object.fromEntries([...this.states].map(([key, s]) => [key, s.due?.toISOString()]));
  }

  /** Resolves when every firing started so far has finished and been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  start(): void {
    if (this.timer) return;
    const check = () => {
      this.checking ??= this.tick()
        .catch((err: unknown) => this.options.log?.warn(`scheduler: ${(err as Error).message}`))
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
      this.warnOnce('store', `scheduler: schedules set at run time are unreadable: ${(err as Error).message}`);
      return [];
    }
  }

  private stateFor(key: string, task: ScheduledTask, now: Date): TaskState | undefined {
    const signature = `${task.cron}\u0000${task.timezone ?? ''}`;
    const existing = this.states.get(key);
    if (existing?.signature === signature) return existing;
    let schedule: Schedule;
    try {
      schedule = parseSchedule(task.cron, task.timezone);
    } catch (err) {
      this.warnOnce(`${key}:${signature}`, `scheduler: task "${task.id}" is skipped: ${(err as Error).message}`);
      this.states.delete(key);
      return undefined;
    }
    const state: TaskState = { signature, schedule, due: schedule.nextAfter(now) };
    this.states.set(key, state);
    return state;
  }

  private fire(task: ScheduledTask, scheduledFor: Date, firedAt: Date): void {
    const key = `${task.source}:${task.id}`;
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
