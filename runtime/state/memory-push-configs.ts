/**
 * Push notification configs in this process's memory, for the `file:`
 * store, whose tasks live here too (memory-tasks.ts): a config outlives
 * neither the process nor, for long, its task. Scoped like the tasks
 * (tenant + user). Bounded: at most `maxTasks` tasks' configs, the oldest
 * set dropped first (the task limits of memory-tasks.ts keep about as many
 * tasks); a task's own are bounded where configs are set (push-notifications.ts).
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import type { PushConfigRecords } from './store.ts';

export const DEFAULT_PUSH_CONFIG_TASKS = 12_000;

export class MemoryPushConfigs implements PushConfigRecords {
  /** By scope and task id, in the order they were last set (a Map keeps insertion order). */
  private readonly byTask = new Map<string, StoredPushNotificationConfig[]>();

  constructor(private readonly maxTasks = DEFAULT_PUSH_CONFIG_TASKS) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    // The SDK reads the id the store gave off the config it passed in.
    if (!config.id) config.id = randomUUID();
    const key = keyOf(context, taskId);
    const entries = (this.byTask.get(key) ?? []).filter((entry) => entry.config.id !== config.id);
    entries.push({ config: structuredClone(config), wireVersion: context.requestedVersion || '0.3' });
    this.byTask.delete(key);
    this.byTask.set(key, entries);
    for (const oldest of this.byTask.keys()) {
      if (this.byTask.size <= this.maxTasks) break;
      this.byTask.delete(oldest);
    }
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
    if (rest.length) this.byTask.set(key, rest);
    else this.byTask.delete(key);
  }

  /** How many tasks have configs here (for tests). */
  get size(): number {
    return this.byTask.size;
  }
}

/** The scope memory-tasks.ts keeps a task under: its tenant and user. */
function keyOf(context: ServerCallContext | undefined, taskId: string): string {
  return `${context?.tenant ?? ''}\u0000${context?.user?.userName || 'unknown'}\u0000${taskId}`;
}
