/**
 * A2A tasks in this process's memory (the `file:` store: one process, and
 * a task's turn cannot outlive it). Leases are not needed: the process that
 * would hold one is the only one that could see the task.
 *
 * Memory is bounded. Running tasks (submitted, working) are bounded by the
 * turn limit (FORGE_MAX_TURNS). Of the paused ones (input-required: an
 * approval must stay resumable; auth-required) the latest `maxPaused`, no
 * more than about `maxPausedBytes`: a client that starts turns that pause
 * and never answers them is not bounded by the turn limit, and a paused task
 * dropped is what a restart does to every task of this store (its
 * conversation, pending approval and all, stays on disk). Of the finished
 * ones (completed, failed, canceled, rejected) only the latest
 * `maxFinished`, and no more than about `maxFinishedBytes` of them. The SDK's
 * InMemoryTaskStore kept every task with its whole history for the life of
 * the process, so clients sending large messages could exhaust the heap. An
 * evicted task answers GetTask with "task not found", as the A2A spec allows;
 * its conversation stays in .forge/sessions/. Tasks are scoped like the
 * SDK's store (tenant + user), so behaviour is otherwise unchanged.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { TaskLease, TaskRecords } from './store.ts';
import { DEFAULT_PAGE_SIZE, isAfter, newestFirst, pageCursor, pageToken } from './task-page.ts';

export const DEFAULT_FINISHED_TASKS = 1000;
export const DEFAULT_FINISHED_TASK_BYTES = 64 * 1024 * 1024;
export const DEFAULT_PAUSED_TASKS = 10_000;
export const DEFAULT_PAUSED_TASK_BYTES = 256 * 1024 * 1024;

/** TaskState's terminal values (numbers, so that saving a task does not load the SDK). */
const FINISHED_STATES = new Set([3 /* COMPLETED */, 4 /* FAILED */, 5 /* CANCELED */, 7 /* REJECTED */]);
/** The states a task waits in for its client, with no turn running. */
const PAUSED_STATES = new Set([6 /* INPUT_REQUIRED */, 8 /* AUTH_REQUIRED */]);

export interface MemoryTaskLimits {
  /** How many finished tasks are kept (the latest ones). */
  maxFinished?: number;
  /** About how many bytes of finished tasks are kept (the latest one always is). */
  maxFinishedBytes?: number;
  /** How many paused tasks are kept (the latest ones). */
  maxPaused?: number;
  /** About how many bytes of paused tasks are kept (the latest one always is). */
  maxPausedBytes?: number;
  /** Told the key (keyOf) of each task dropped to keep within the limits: its push configs go with it. */
  onDropped?: (key: string) => void;
}

/** Tasks kept up to a count and about a size, the oldest dropped first (a Map keeps insertion order). */
class LatestTasks {
  readonly tasks = new Map<string, { task: Task; size: number }>();
  bytes = 0;

  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
    private readonly onDropped?: (key: string) => void,
  ) {}

  add(key: string, task: Task): void {
    const size = approximateSize(task);
    this.tasks.set(key, { task, size });
    this.bytes += size;
    // The newest stays, so a client can still get what it just got back.
    for (const oldest of this.tasks.keys()) {
      if (this.tasks.size <= 1 || (this.tasks.size <= this.maxCount && this.bytes <= this.maxBytes)) return;
      this.delete(oldest);
      this.onDropped?.(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.tasks.get(key);
    if (!entry) return;
    this.tasks.delete(key);
    this.bytes -= entry.size;
  }
}

export class MemoryTasks implements TaskRecords {
  /** Submitted and working: as many as turns run, which FORGE_MAX_TURNS bounds. */
  private readonly running = new Map<string, Task>();
  private readonly paused: LatestTasks;
  private readonly finished: LatestTasks;

  constructor(limits: MemoryTaskLimits = {}) {
    this.finished = new LatestTasks(Math.max(1, limits.maxFinished ?? DEFAULT_FINISHED_TASKS), limits.maxFinishedBytes ?? DEFAULT_FINISHED_TASK_BYTES, limits.onDropped);
    this.paused = new LatestTasks(Math.max(1, limits.maxPaused ?? DEFAULT_PAUSED_TASKS), limits.maxPausedBytes ?? DEFAULT_PAUSED_TASK_BYTES, limits.onDropped);
  }

  /** Whether the task is held now (synchronous: nothing can drop it between this answer and what the caller does next in the same step). */
  has(taskId: string, context: ServerCallContext): boolean {
    const key = keyOf(context, taskId);
    return this.running.has(key) || this.paused.tasks.has(key) || this.finished.tasks.has(key);
  }

  /** Whether the task held under `key` (keyOf) is running or paused, or finished; undefined when it is not held. */
  stateOf(key: string): 'unfinished' | 'finished' | undefined {
    if (this.running.has(key) || this.paused.tasks.has(key)) return 'unfinished';
    return this.finished.tasks.has(key) ? 'finished' : undefined;
  }

  /** The contexts of the tasks running or paused now: their conversations are kept (FORGE_CONVERSATION_RETENTION). */
  unfinishedContexts(): Set<string> {
    return new Set([...this.running.values(), ...[...this.paused.tasks.values()].map((entry) => entry.task)].map((task) => task.contextId));
  }

  /** How many tasks are held now (for tests and diagnostics). */
  retained(): { running: number; paused: number; pausedBytes: number; finished: number; finishedBytes: number } {
    return { running: this.running.size, paused: this.paused.tasks.size, pausedBytes: this.paused.bytes, finished: this.finished.tasks.size, finishedBytes: this.finished.bytes };
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const key = keyOf(context, task.id);
    this.forget(key);
    const copy = structuredClone(task);
    const state = task.status?.state ?? 0;
    if (FINISHED_STATES.has(state)) this.finished.add(key, copy);
    else if (PAUSED_STATES.has(state)) this.paused.add(key, copy);
    else this.running.set(key, copy);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const key = keyOf(context, taskId);
    const task = this.running.get(key) ?? this.paused.tasks.get(key)?.task ?? this.finished.tasks.get(key)?.task;
    return task && structuredClone(task);
  }

  /** The caller's tasks, newest status first (as the SDK's store and the Postgres store order them). */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = scopeOf(context);
    const after = params.statusTimestampAfter ? new Date(params.statusTimestampAfter).getTime() : undefined;
    const tasks = [...this.running.entries(), ...[...this.paused.tasks.entries(), ...this.finished.tasks.entries()].map(([key, entry]) => [key, entry.task] as const)]
      .filter(([key]) => key.startsWith(scope))
      .map(([, task]) => task)
      .filter((task) => !params.contextId || task.contextId === params.contextId)
      .filter((task) => !params.status || task.status?.state === params.status)
      .filter((task) => after === undefined || (task.status?.timestamp !== undefined && new Date(task.status.timestamp).getTime() > after))
      .sort(newestFirst);
    const pageSize = params.pageSize || DEFAULT_PAGE_SIZE;
    const cursor = await pageCursor(params.pageToken);
    const rest = cursor ? tasks.filter((task) => isAfter(task, cursor)) : tasks;
    const page = rest.slice(0, pageSize).map((task) => {
      const copy = structuredClone(task);
      if (!params.includeArtifacts) copy.artifacts = [];
      return copy;
    });
    const nextPageToken = page.length < rest.length ? pageToken(page[page.length - 1]) : '';
    return { tasks: page, nextPageToken, pageSize, totalSize: tasks.length };
  }

  async fail(taskId: string, reason: string): Promise<boolean> {
    const { failTask } = await import('./fail-task.ts');
    // The scope the JSON-RPC front end stores tasks under (one principal: the bearer token).
    const { defaultServerCallContextBuilder, UnauthenticatedUser } = await import('../vendor/a2a.ts');
    const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
    const task = await this.load(taskId, context);
    const failed = task && failTask(task, reason);
    if (failed) await this.save(failed, context);
    return Boolean(failed);
  }

  async hold(): Promise<TaskLease> {
    return { release: async () => {} };
  }

  private forget(key: string): void {
    this.running.delete(key);
    this.paused.delete(key);
    this.finished.delete(key);
  }
}

/** Like the SDK's InMemoryTaskStore: a task belongs to its tenant and user. */
function scopeOf(context: ServerCallContext | undefined): string {
  return `${context?.tenant ?? ''}\u0000${context?.user?.userName || 'unknown'}\u0000`;
}

/** The key a task is held under, and its push configs beside it (memory-push-configs.ts). */
export function keyOf(context: ServerCallContext | undefined, taskId: string): string {
  return `${scopeOf(context)}${taskId}`;
}

/**
 * About how much memory a task holds: its strings and byte arrays, plus a
 * little per value. Walked without recursion (a data part may nest deeply),
 * and cheaper than serialising the task.
 */
export function approximateSize(value: unknown): number {
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === 'string') size += next.length * 2;
    else if (next instanceof Uint8Array) size += next.byteLength;
    else if (Array.isArray(next)) for (const item of next) pending.push(item);
    else if (next && typeof next === 'object') {
      // Keys are held too: a data part of 5,000 keys of 190 characters (980 kB) was counted as 40 kB.
      for (const [key, item] of Object.entries(next)) {
        size += key.length * 2;
        pending.push(item);
      }
    }
    else size += 8;
  }
  return size;
}
