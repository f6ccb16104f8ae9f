/** A task that was submitted or working, as failed with a reason; undefined for one that finished or waits for input. */
import type { Task } from '@a2a-js/sdk';
import { Role, TaskState } from '../vendor/a2a.ts';

export function failTask(task: Task, reason: string): Task | undefined {
  const state = task.status?.state;
  if (state !== TaskState.TASK_STATE_SUBMITTED && state !== TaskState.TASK_STATE_WORKING) return undefined;
  const message = {
    messageId: `${task.id}-failed`,
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text' as const, value: reason }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { ...task, status: { state: TaskState.TASK_STATE_FAILED, message, timestamp: new Date().toISOString() } };
}
