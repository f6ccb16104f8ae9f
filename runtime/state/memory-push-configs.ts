/**
 * Push notification configs in this process's memory, for the `file:`
 * store, whose tasks live here too (memory-tasks.ts): a config outlives
 * neither the process nor its task (the file store drops a task's configs
 * when memory-tasks.ts drops the task: forgetTask). Scoped like the tasks
 * (tenant + user). Bounded besides: at most `maxTasks` tasks' configs and
 * about `maxBytes`. To keep within them the configs of a finished task go
 * first, oldest set first, then those of a task the store does not hold (a
 * message set them for a task that never came to be); never those of a task
 * still running or paused, whose webhook waits for its final state: with
 * only those left, a new task's config is refused ('store full'), not kept
 * by silently dropping another's. The tasks' own limits make that rare (the
 * default 12,000 is above the paused tasks kept and the default turn limit);
 * a very high FORGE_MAX_TURNS can reach it. A task's own configs are bounded
 * where configs are set (webhook-checks.ts).
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import { approximateSize, keyOf } from './memory-tasks.ts';
import type { PushConfigRecords, PushConfigSave } from './store.ts';

export const DEFAULT_PUSH_CONFIG_TASKS = 12_000;
export const DEFAULT_PUSH_CONFIG_BYTES = 64 * 1024 * 1024;

/** A held task as the cap sees it: an unfinished one's configs are never dropped. */
export type TaskState = 'unfinished' | 'finished';

export class MemoryPushConfigs implements PushConfigRecords {
  /** By scope and task id, in the order they were last set (a Map keeps insertion order). */
  private readonly byTask = new Map<string, StoredPushNotificationConfig[]>();
  /** About how many bytes the configs of each task (by the same key) take. */
  private readonly sizes = new Map<string, number>();
  private bytes = 0;

  constructor(
    private readonly maxTasks = DEFAULT_PUSH_CONFIG_TASKS,
    private readonly maxBytes = DEFAULT_PUSH_CONFIG_BYTES,
    /** Whether the tasks' store holds the task now (absent: every task counts as held). */
    private readonly holds: (taskId: string, context: ServerCallContext) => boolean = () => true,
    /** Whether the task held under `key` (keyOf) is unfinished (running or paused) or finished; undefined: not held (absent: every task counts as finished). */
    private readonly taskState: (key: string) => TaskState | undefined = () => 'finished',
  ) {}

  /** Throws when the store is full of unfinished tasks' configs (saveWithin says 'store full'). */
  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    if (!this.keep(taskId, context, config)) throw new Error("push notification config refused: every task whose configs are kept here is still running or paused");
  }

  async saveWithin(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig, max: number, existingTask = false): Promise<PushConfigSave> {
    // No await between the checks and the save: nothing (no task dropped, no other set) runs in between.
    if (existingTask && !this.holds(taskId, context)) return 'no task';
    const others = (this.byTask.get(keyOf(context, taskId)) ?? []).filter((entry) => !config.id || entry.config.id !== config.id);
    if (others.length >= max) return 'full';
    return this.keep(taskId, context, config) ? 'saved' : 'store full';
  }

  /** Saves the config unless that would drop a running or paused task's configs; false then, and nothing changed. */
  private keep(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): boolean {
    // The SDK reads the id the store gave off the config it passed in.
    if (!config.id) config.id = randomUUID();
    const key = keyOf(context, taskId);
    const entries = (this.byTask.get(key) ?? []).filter((entry) => entry.config.id !== config.id);
    entries.push({ config: structuredClone(config), wireVersion: context.requestedVersion || '0.3' });
    const dropped = this.toDropFor(key, approximateSize(entries));
    if (!dropped) return false;
    for (const other of dropped) this.remove(other);
    this.remove(key);
    this.put(key, entries);
    return true;
  }

  /**
   * The tasks whose configs go so that `key`'s, of `size` bytes, fit: a finished task's first, then one the store does not
   * hold, oldest set first. Undefined when even all of them are not enough. The task being set stays, alone if need be,
   * so a client can still read back what it set.
   */
  private toDropFor(key: string, size: number): string[] | undefined {
    let count = this.byTask.size + (this.byTask.has(key) ? 0 : 1);
    let bytes = this.bytes - (this.sizes.get(key) ?? 0) + size;
    const within = () => count <= 1 || (count <= this.maxTasks && bytes <= this.maxBytes);
    const dropped: string[] = [];
    if (within()) return dropped;
    for (const wanted of ['finished', undefined] as const) {
      for (const other of this.byTask.keys()) {
        if (other === key || this.taskState(other) !== wanted) continue;
        dropped.push(other);
        count--;
        bytes -= this.sizes.get(other) ?? 0;
        if (within()) return dropped;
      }
    }
    return undefined;
  }

  /** Drops every config of the task held under `key` (memory-tasks.ts's keyOf): the task was dropped. */
  forgetTask(key: string): void {
    this.remove(key);
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((entry) => entry.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    return structuredClone(this.byTask.get(keyOf(context, taskId)) ?? []);
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    const key = keyOf(context, taskId);
    // As the SDK's store: no id means the config whose id is the task's.
    const id = configId ?? taskId;
    const rest = (this.byTask.get(key) ?? []).filter((entry) => entry.config.id !== id);
    if (rest.length) {
      // In place (a Map keeps an existing key's position): deleting a config does not make its task the most recently set.
      this.bytes -= this.sizes.get(key) ?? 0;
      this.put(key, rest);
    } else this.remove(key);
  }

  private put(key: string, entries: StoredPushNotificationConfig[]): void {
    const size = approximateSize(entries);
    this.byTask.set(key, entries);
    this.sizes.set(key, size);
    this.bytes += size;
  }

  private remove(key: string): void {
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
    this.byTask.delete(key);
  }

  /** How many tasks have configs here (for tests). */
  get size(): number {
    return this.byTask.size;
  }

  /** About how many bytes the configs take (for tests). */
  get retainedBytes(): number {
    return this.bytes;
  }
}
