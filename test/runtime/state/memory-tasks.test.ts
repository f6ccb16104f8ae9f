/**
 * The `file:` store's A2A tasks stay within bounds: finished tasks past their
 * count or size limit are dropped oldest first, and so are paused ones past
 * theirs; running ones (which the turn limit bounds) never are. (The end-to-end case, with the SDK client,
 * is in test/runtime/server/a2a.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '@a2a-js/sdk';
import { defaultServerCallContextBuilder, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { approximateSize, MemoryTasks } from '../../../runtime/state/memory-tasks.ts';
import { listRequest, pagesWhileTasksArrive } from '../../helpers/task-paging.ts';

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });

function task(id: string, state: TaskState, text = ''): Task {
  const parts = [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
  const message = { messageId: `${id}-m`, contextId: 'c', taskId: id, role: 1, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
  return { id, contextId: 'c', status: { state, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [message], metadata: undefined };
}

describe('MemoryTasks', () => {
  it('keeps at most about the byte limit of finished tasks, and the paused one', async () => {
    const tasks = new MemoryTasks({ maxFinished: 100, maxFinishedBytes: 5_000_000 });
    await tasks.save(task('paused', TaskState.TASK_STATE_INPUT_REQUIRED, 'p'.repeat(1_000_000)), context);
    for (let i = 0; i < 20; i++) await tasks.save(task(`big-${i}`, TaskState.TASK_STATE_COMPLETED, 'x'.repeat(1_000_000)), context);
    const { paused, finished, finishedBytes } = tasks.retained();
    expect(paused).toBe(1);
    expect(finished).toBe(2); // two megabyte strings take about 4 MB
    expect(finishedBytes).toBeLessThanOrEqual(5_000_000);
    expect(await tasks.load('paused', context)).toBeDefined();
    expect(await tasks.load('big-19', context)).toBeDefined();
    expect(await tasks.load('big-0', context)).toBeUndefined();
  });

  it('moves a task between the kept sets as its state changes, and lists what it keeps', async () => {
    const tasks = new MemoryTasks({ maxFinished: 2 });
    await tasks.save(task('a', TaskState.TASK_STATE_WORKING), context);
    for (const id of ['b', 'c', 'd']) await tasks.save(task(id, TaskState.TASK_STATE_FAILED), context);
    expect(tasks.retained()).toMatchObject({ running: 1, finished: 2 });
    await tasks.save(task('a', TaskState.TASK_STATE_CANCELED), context);
    expect(tasks.retained()).toMatchObject({ running: 0, finished: 2 });
    expect((await tasks.list({ tenant: '', contextId: 'c', status: 0, pageSize: 1, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false }, context)).totalSize).toBe(2);
    expect(await tasks.load('c', context)).toBeUndefined();
    expect((await tasks.load('a', context))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('keeps the latest paused tasks past their count or size, never dropping a running one', async () => {
    const tasks = new MemoryTasks({ maxPaused: 3, maxPausedBytes: 5_000_000 });
    await tasks.save(task('running', TaskState.TASK_STATE_WORKING, 'r'.repeat(1_000_000)), context);
    // A client that starts turns that pause for approval, and never answers.
    for (let i = 0; i < 10; i++) await tasks.save(task(`asks-${i}`, i % 2 ? TaskState.TASK_STATE_AUTH_REQUIRED : TaskState.TASK_STATE_INPUT_REQUIRED), context);
    expect(tasks.retained()).toMatchObject({ running: 1, paused: 3 });
    expect((await Promise.all(['asks-6', 'asks-7', 'asks-8', 'asks-9'].map((id) => tasks.load(id, context)))).map((t) => t?.id)).toEqual([undefined, 'asks-7', 'asks-8', 'asks-9']);
    for (let i = 0; i < 10; i++) await tasks.save(task(`big-${i}`, TaskState.TASK_STATE_INPUT_REQUIRED, 'x'.repeat(1_000_000)), context);
    const { paused, pausedBytes } = tasks.retained();
    expect(paused).toBe(2); // two megabyte strings take about 4 MB
    expect(pausedBytes).toBeLessThanOrEqual(5_000_000);
    expect(await tasks.load('running', context)).toBeDefined();
    // Answered, a paused task runs again and is no longer counted as paused.
    await tasks.save(task('big-9', TaskState.TASK_STATE_WORKING), context);
    expect(tasks.retained()).toMatchObject({ running: 2, paused: 1, pausedBytes: expect.any(Number) });
    expect(tasks.retained().pausedBytes).toBeLessThan(2_100_000);
  });

  it('lists each task once, newest first, while newer tasks arrive between pages', async () => {
    expect(await pagesWhileTasksArrive(new MemoryTasks(), context)).toEqual([['e', 'd', 'c'], ['b', 'a']]);
  });

  it('refuses a page token it did not give, saying what to pass', async () => {
    const tasks = new MemoryTasks();
    await tasks.save(task('a', TaskState.TASK_STATE_COMPLETED), context);
    for (const token of [Buffer.from('3').toString('base64url'), 'not a token', 'eHxh+/8=', Buffer.from('\0|a').toString('base64url')]) {
      await expect(tasks.list(listRequest(token), context)).rejects.toThrow('pageToken is not one this server gave: pass the nextPageToken of the page before');
    }
  });
});

describe('approximateSize', () => {
  it("counts an object's keys as well as its values: a data part of 5,000 keys of 190 characters is about 2 MB held, not 40 kB", () => {
    const data = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`${'k'.repeat(185)}${i}`.padEnd(190, '_'), 1]));
    expect(approximateSize(data)).toBeGreaterThan(5_000 * 190 * 2);
    expect(approximateSize({ a: 'xy' })).toBe(2 + 4);
  });
});
