/**
 * Paging through a task store's list while tasks arrive between pages, as
 * a client listing tasks on a busy agent does. Both stores get the same
 * walk (test/runtime/state/memory-tasks.test.ts, postgres-store.test.ts).
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ListTasksRequest, Task } from '@a2a-js/sdk';
import { TaskState } from '../../runtime/vendor/a2a.ts';
import type { TaskRecords } from '../../runtime/state/store.ts';

export function listRequest(pageToken = '', pageSize = 3): ListTasksRequest {
  return { tenant: '', contextId: 'paged', status: 0, pageSize, pageToken, historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false };
}

function taskAt(id: string, timestamp: string): Task {
  return { id, contextId: 'paged', status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp }, artifacts: [], history: [], metadata: undefined };
}

/**
 * Saves five tasks (b and c with one status time, on either side of the first page's end), lists
 * three a page, and saves two newer tasks after the first page. Returns every page's task ids.
 */
export async function pagesWhileTasksArrive(store: Pick<TaskRecords, 'save' | 'list'>, context?: ServerCallContext): Promise<string[][]> {
  const at = (second: number) => `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;
  for (const [id, second] of [['a', 1], ['b', 2], ['c', 2], ['d', 3], ['e', 4]] as const) await store.save(taskAt(id, at(second)), context!);
  const pages: string[][] = [];
  let token = '';
  do {
    const page = await store.list(listRequest(token), context!);
    pages.push(page.tasks.map((task) => task.id));
    if (pages.length === 1) for (const [id, second] of [['new-1', 10], ['new-2', 11]] as const) await store.save(taskAt(id, at(second)), context!);
    token = page.nextPageToken;
  } while (token && pages.length < 10);
  return pages;
}
