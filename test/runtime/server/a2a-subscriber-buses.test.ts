/**
 * A resubscribe to a task paused for approval, whose client hangs up. The
 * SDK's resubscribe waits on the task's events and nothing else, and a paused
 * task may send none for good: the subscription (its queue, the request and
 * response) stayed until the task moved on, one more per resubscribe and
 * hang-up. With SubscriberBuses, the request's hang-up ends its subscription
 * alone; the task and other subscribers carry on. Run on the SDK's own
 * request handler, task store and event queue.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBusManager } from '@a2a-js/sdk/server';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { buildAgentCard } from '../../../runtime/server/a2a/agent-card.ts';
import { SubscriberBuses } from '../../../runtime/server/a2a/subscriber-buses.ts';
import { AgentEvent, defaultServerCallContextBuilder, DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';

/** Puts every task it is given in input-required, as a call waiting for approval does. */
const pausing: AgentExecutor = {
  execute: async (request, bus) => {
    bus.publish(AgentEvent.task({ id: request.taskId, contextId: request.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [request.userMessage], metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate({ taskId: request.taskId, contextId: request.contextId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
  },
  cancelTask: async () => {},
};

const callContext = () => defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });

async function pausedTask(buses: ExecutionEventBusManager) {
  const manifest = { agent_id: 'subscribers', version: '1.0.0', description: 'subscribers', tools: [] } as unknown as AgentManifest;
  const handler = new DefaultRequestHandler(buildAgentCard(manifest, 'http://127.0.0.1:1', true), new InMemoryTaskStore(), pausing, buses);
  const message: Message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'delete it' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
  const task = (await handler.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined }, callContext())) as { id: string; status: { state: number } };
  expect(task.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return { handler, taskId: task.id };
}

/** Whether the stream's next event (or its end) comes within `ms`. */
async function settlesWithin(next: Promise<IteratorResult<unknown>>, ms: number): Promise<IteratorResult<unknown> | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([next, new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)))]);
  clearTimeout(timer);
  return result;
}

describe('resubscribe to a paused task, then hang up', () => {
  it('with the SDK\'s own buses the subscription stays (what was wrong)', async () => {
    const { handler, taskId } = await pausedTask(new DefaultExecutionEventBusManager());
    const stream = handler.resubscribe({ tenant: '', id: taskId }, callContext());
    expect((await stream.next()).done).toBe(false); // the task itself
    expect(await settlesWithin(stream.next(), 200)).toBe('pending');
  });

  it('with SubscriberBuses the hang-up ends that subscription alone', async () => {
    const buses = new SubscriberBuses();
    const { handler, taskId } = await pausedTask(buses);
    const leaving = callContext();
    const staying = callContext();
    const left = handler.resubscribe({ tenant: '', id: taskId }, leaving);
    const stays = handler.resubscribe({ tenant: '', id: taskId }, staying);
    expect((await left.next()).done).toBe(false);
    expect((await stays.next()).done).toBe(false);
    const leftNext = left.next();
    const staysNext = stays.next();
    buses.hangUp(leaving);
    expect(await settlesWithin(leftNext, 2000)).toEqual({ done: true, value: undefined });
    expect(await settlesWithin(staysNext, 200)).toBe('pending');
  });
});
