/**
 * A2A tasks in this process's memory (the `file:` store: one process, and
 * a task's turn cannot outlive it). The SDK's InMemoryTaskStore does the
 * work; it is loaded with the protocol SDKs on first use, so commands that
 * never serve A2A never load them. Leases are not needed: the process that
 * would hold one is the only one that could see the task.
 */
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { TaskLease, TaskRecords } from './store.ts';

export class MemoryTasks implements TaskRecords {
  private inner: Promise<TaskStore> | undefined;

  private store(): Promise<TaskStore> {
    return (this.inner ??= import('../vendor/protocol.ts').then(({ InMemoryTaskStore }) => new InMemoryTaskStore()));
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    return (await this.store()).save(task, context);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return (await this.store()).load(taskId, context);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return (await this.store()).list(params, context);
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
}
