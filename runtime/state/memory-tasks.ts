/**
 * A2A tasks in this process's memory (the `file:` store: one process, and
 * a task's turn cannot outlive it). Leases are not needed: the process that
 * would hold one is the only one that could see the task.
 *
 * Memory is bounded: every unfinished task is kept (submitted, working,
 * input-required — a paused approval must stay resumable), but of the
 * finished ones (completed, failed, canceled, rejected) only the latest
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

/** TaskState's terminal values (numbers, so that saving a task does not load the SDK). */
const FINISHED_STATES = new Set([3 /* COMPLETED */, 4 /* FAILED */, 5 /* CANCELED */, 7 /* REJECTED */]);

export interface MemoryTaskLimits {
  /** How many finished tasks are kept (the latest ones). */
  maxFinished?: number;
  /** About how many bytes of finished tasks are kept (the latest one always is). */
  maxFinishedBytes?: number;
}

interface FinishedEntry {
  task: Task;
  size: number;
}

export class MemoryTasks implements TaskRecords {
  private readonly live = new Map<string, Task>();
  /** In the order they finished (a Map keeps insertion order): the oldest is evicted first. */
  private readonly finished = new Map<string, FinishedEntry>();
  private finishedBytes = 0;
  private readonly maxFinished: number;
  private readonly maxFinishedBytes: number;

  constructor(limits: MemoryTaskLimits = {}) {
    this.maxFinished = Math.max(1, limits.maxFinished ?? DEFAULT_FINISHED_TASKS);
    this.maxFinishedBytes = limits.maxFinishedBytes ?? DEFAULT_FINISHED_TASK_BYTES;
  }

  /** How many tasks are held now, unfinished and finished (for tests and diagnostics). */
  retained(): { live: number; finished: number; finishedBytes: number } {
    return { live: this.live.size, finished: this.finished.size, finishedBytes: this.finishedBytes };
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const key = keyOf(context, task.id);
    this.forget(key);
    const copy = structuredClone(task);
    if (!FINISHED_STATES.has(task.status?.state ?? 0)) {
      this.live.set(key, copy);
      return;
    }
    const size = approximateSize(copy);
    this.finished.set(key, { task: copy, size });
    this.finishedBytes += size;
    this.evict();
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const key = keyOf(context, taskId);
    const task = this.live.get(key) ?? this.finished.get(key)?.task;
    return task && structuredClone(task);
  }

  /** The caller's tasks, newest status first (as the SDK's store and the Postgres store order them). */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = scopeOf(context);
    const after = params.statusTimestampAfter ? new Date(params.statusTimestampAfter).getTime() : undefined;
    const tasks = [...this.live.entries(), ...[...this.finished.entries()].map(([key, entry]) => [key, entry.task] as const)]
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
    const { defaultServerCallContextBuilder, UnauthenticatedUser } = await import('../vendor/protocol.ts');
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
    this.live.delete(key);
    const entry = this.finished.get(key);
    if (!entry) return;
    this.finished.delete(key);
    this.finishedBytes -= entry.size;
  }

  /** Drops the oldest finished tasks past either limit; the newest stays, so a client can still get what it just got back. */
  private evict(): void {
    for (const key of this.finished.keys()) {
      if (this.finished.size <= 1) return;
      if (this.finished.size <= this.maxFinished && this.finishedBytes <= this.maxFinishedBytes) return;
      this.forget(key);
    }
  }
}

/** Like the SDK's InMemoryTaskStore: a task belongs to its tenant and user. */
function scopeOf(context: ServerCallContext | undefined): string {
  return `${context?.tenant ?? ''}\u0000${context?.user?.userName || 'unknown'}\u0000`;
}

function keyOf(context: ServerCallContext | undefined, taskId: string): string {
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
    else if (next && typeof next === 'object') for (const item of Array.isArray(next) ? next : Object.values(next)) pending.push(item);
    else size += 8;
  }
  return size;
}
