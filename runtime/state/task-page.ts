/**
 * The pages of an A2A task list, newest status first, by keyset: a page
 * token names the last task of the page before (its status time and id, as
 * the SDK's own store spells it), and the next page starts after that task
 * in the list's order. An offset would shift under tasks that arrive or
 * change while a client pages: the list would repeat some tasks and skip
 * others. Here a task whose status did not change is listed exactly once.
 *
 * Both stores order by status time, then id, comparing code units (the
 * Postgres one with the C collation), so that a page token means the same
 * to either.
 */
import type { Task } from '@a2a-js/sdk';

/** Tasks in a page when the request names no size (the SDK's store's default). */
export const DEFAULT_PAGE_SIZE = 50;

export interface PageCursor {
  /** The task's status time ('' for none: such tasks come last). */
  time: string;
  id: string;
}

/**
 * The cursor a page token names; a token this server did not give is a malformed request (the protocol
 * SDK, which has its error, is loaded only then: the file store does not load it to list tasks).
 */
export async function pageCursor(token: string): Promise<PageCursor | undefined> {
  if (!token) return undefined;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const bar = text.indexOf('|');
  // base64url decoding skips what is not base64: only a token that encodes back to itself is one this server made.
  // No NUL either: Postgres's text cannot hold one, and the query would fail as the store's error.
  if (bar < 0 || text.includes('\0') || Buffer.from(text).toString('base64url') !== token.replace(/=+$/, '')) {
    const { RequestMalformedError } = await import('../vendor/a2a.ts');
    throw new RequestMalformedError('pageToken is not one this server gave: pass the nextPageToken of the page before, or none for the first page');
  }
  return { time: text.slice(0, bar), id: text.slice(bar + 1) };
}

export function pageToken(task: Pick<Task, 'id' | 'status'>): string {
  return Buffer.from(`${task.status?.timestamp ?? ''}|${task.id}`).toString('base64url');
}

/** The list's order: newest status first, then the greater id first. */
export function newestFirst(a: Pick<Task, 'id' | 'status'>, b: Pick<Task, 'id' | 'status'>): number {
  return compare(b.status?.timestamp ?? '', a.status?.timestamp ?? '') || compare(b.id, a.id);
}

/** Whether a task comes after the cursor in the list's order. */
export function isAfter(task: Pick<Task, 'id' | 'status'>, cursor: PageCursor): boolean {
  return newestFirst({ id: cursor.id, status: { timestamp: cursor.time } as Task['status'] }, task) < 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
