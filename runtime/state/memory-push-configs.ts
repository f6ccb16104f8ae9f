/**
 * Push notification configs in this process's memory, for the `file:`
 * store, whose tasks live here too (memory-tasks.ts): a config outlives
 * neither the process nor its task (the file store drops a task's configs
 * when memory-tasks.ts drops the task: forgetTask). Scoped like the tasks
 * (tenant + user). Bounded besides: at most `maxTasks` tasks' configs, the
 * oldest set dropped first (configs a message set for a task that never
 * came to be); a task's own are bounded where configs are set
 * (webhook-checks.ts).
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import { approximateSize, keyOf } from './memory-tasks.ts';
import type { PushConfigRecords, PushConfigSave } from './store.ts';

export const DEFAULT_PUSH_CONFIG_TASKS = 12_000;
export const DEFAULT_PUSH_CONFIG_BYTES = 64 * 1024 * 1024;

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
  ) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    // The SDK reads the id the store gave off the config it passed in.
    if (!config.id) config.id = randomUUID();
    const key = keyOf(context, taskId);
    const entries = (this.byTask.get(key) ?? []).filter((entry) => entry.config.id !== config.id);
    entries.push({ config: structuredClone(config), wireVersion: context.requestedVersion || '0.3' });
    this.remove(key);
    this.put(key, entries);
    // The task just set stays, so a client can still read back what it set.
    for (const oldest of this.byTask.keys()) {
      if (this.byTask.size <= 1 || (this.byTask.size <= this.maxTasks && this.bytes <= this.maxBytes)) break;
      this.remove(oldest);
    }
  }

  async saveWithin(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig, max: number, existingTask = false): Promise<PushConfigSave> {
    // No await between the checks and the save: nothing (no task dropped, no other set) runs in between.
    if (existingTask && !this.holds(taskId, context)) return 'no task';
    const others = (this.byTask.get(keyOf(context, taskId)) ?? []).filter((entry) => !config.id || entry.config.id !== config.id);
    if (others.length >= max) return 'full';
    await this.save(taskId, context, config);
    return 'saved';
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
