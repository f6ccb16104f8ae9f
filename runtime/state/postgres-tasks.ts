/**
 * A2A tasks in Postgres, through the SDK's TaskStore interface (any replica
 * loads a task another one started), and leases: a replica running a task
 * holds a lease it renews; every replica reaps leases whose holder stopped
 * renewing (it died) and fails their tasks, so none stays "working".
 *
 * While the store is away (a failover, a pooler's restart), a turn goes on:
 * its task's states are kept in the process and written when the store is
 * back, its loads answered from what it last saved (or its lease found),
 * and its lease kept until then. Each write names its writer (the replica,
 * and the write's number): a kept state lands only if no other replica
 * wrote the task meanwhile. A finished task stays as it first finished.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse, Task as TaskType } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
import type { Pool, QueryConfig } from 'pg';
import { Task, TaskState } from '../vendor/a2a.ts';
import { delay } from '../duration.ts';
import { failTask } from './fail-task.ts';
import { DEFAULT_PAGE_SIZE, pageCursor, pageToken } from './task-page.ts';
import { isStoreAway, retryWhileStoreAway } from './pool-client.ts';
import { storedJson } from './postgres-text.ts';
import type { Logger } from '../tools/model.ts';
import { OutageNotice } from '../outage-notice.ts';
import type { TaskLease, TaskRecords } from './store.ts';

/**
 * A task's save. A finished task's state stays as the fleet first saw it finish, whoever saves it late (a
 * replica cut off meanwhile, one on older code): the table's trigger skips the update (postgres-migrations.ts),
 * and the save counts no row. The A2A SDK applies the same rule to the events it is given.
 */
const SAVE_TASK = `INSERT INTO forge_tasks (id, context_id, state, status_time, data, writer, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6, now())
  ON CONFLICT (id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state, status_time = EXCLUDED.status_time, data = EXCLUDED.data, writer = EXCLUDED.writer, updated_at = now()`;
/** The reaper's failing of a task, only if its row is in the state it was loaded in (no one wrote an end since). */
const FAIL_IF_UNCHANGED = `UPDATE forge_tasks SET state = $2, status_time = $3, data = $4::jsonb, writer = $5, updated_at = now() WHERE id = $1 AND state = $6`;
/**
 * A kept state's write: only if no one but this process wrote the task since its turn took the lease,
 * that is, its last writer is this process ($7, the prefix of its writes) or the one before the turn ($8).
 */
const SAVE_TASK_OVER = `${SAVE_TASK} WHERE left(forge_tasks.writer, length($7::text)) = $7::text OR forge_tasks.writer IS NOT DISTINCT FROM $8::text`;
/** How long a turn's release waits for the SDK to save the turn's last state, so that the lease covers it. */
const LAST_SAVE_WAIT_MS = 5000;

type TaskRow = [id: string, contextId: string, state: number, statusTime: string, data: string];

/** A task's state kept while the store is away. */
interface KeptTask {
  values: TaskRow;
  /**
   * For a task a turn of this process holds: its writer when the turn took the lease (null: none). The
   * kept state lands over that writer's state or over this process's own, which may have landed though
   * its answer never came back, and over no one else's. Unset: only the finished rule holds it back.
   */
  since?: { writer: string | null };
  /** The order of the save whose state `values` is: an older save's failure does not replace it. */
  seq: number;
  /** Settles when the state was written (or refused: the task changed otherwise meanwhile): true; given up: false. */
  settled: Promise<boolean>;
}

/** A task whose lease this process holds, for one turn or more (a message to a task still working). */
interface HeldTask {
  owner: string;
  /** Turns of the task running here under this lease. */
  turns: number;
  /** Settles when the lease is taken (a turn joining waits for it), or rejects when it could not be. */
  taken: Promise<void>;
  /** The task as this process last saved or kept it (loads while the store is away). */
  row?: TaskRow;
  /** The task as the lease found it, as the store sent it: read only if no save came since and the store is away. */
  found?: unknown;
  /** The task's writer when the lease was taken (null: none; unset until it is), which a state kept under this lease may land over. */
  writer?: string | null;
  /** Told of each state saved or kept for the task. */
  onSaved: Set<(state: number) => void>;
  /** Told when a renewal finds the lease gone. */
  onLost: Set<() => void>;
  /** A save of the task failed otherwise than by the store being away: its state is neither in the store nor kept. */
  failedSave?: boolean;
  renew?: NodeJS.Timeout;
}

function rowTask(row: TaskRow): TaskType {
  return Task.fromJSON(JSON.parse(row[4]));
}

function taskRow(task: TaskType): TaskRow {
  return [task.id, task.contextId, task.status?.state ?? 0, task.status?.timestamp ?? '', storedJson(Task.toJSON(task))];
}

/** Postgres's SQLSTATE for an insert whose key names no row. */
const FOREIGN_KEY_VIOLATION = '23503';

export class PostgresTasks implements TaskRecords {
  private reaper: NodeJS.Timeout | undefined;
  /** The tasks whose lease this process holds. */
  private readonly held = new Map<string, HeldTask>();
  /** The tasks whose latest state waits for the store to come back. */
  private readonly kept = new Map<string, KeptTask>();
  private closed = false;
  /** Saves in order of their start, across turns. */
  private saves = 0;
  /** Writes of tasks: each gets its own writer value (`${replicaId}/${n}`), so that a write without one stands out. */
  private writes = 0;
  /** Saves under way, by task: a lease is let go once they are in, or kept. */
  private readonly saving = new Map<string, Set<Promise<unknown>>>();
  /** Whether the last statement found the store away, and when one next found it back: a reaper back from an outage waits. */
  private away = false;
  private backAt = 0;
  /** A reaper that fails on every round while the store is away warns once, and says when it works again. */
  private readonly reaping: OutageNotice;

  constructor(
    private readonly pool: Pool,
    private readonly replicaId: string,
    private readonly leaseMs: number,
    private readonly log?: Logger,
    /** Told of a cancel request found for a task this process holds: its notification may have been lost. */
    private readonly onCancelFound?: (taskId: string) => void,
  ) {
    this.reaping = new OutageNotice(log, { failing: 'state store: cannot reap expired task leases', meanwhile: 'tries go on', back: 'state store: reaping expired task leases again' });
  }

  /**
   * A task's save while the store is away does not fail: the A2A SDK stops saving a task's events
   * after one failed save, which would leave the task at its last saved state (working) after its
   * turn ended. Its latest state is kept here instead, written as soon as the store is back, and
   * read by this process's loads meanwhile.
   */
  async save(task: TaskType, _context?: ServerCallContext): Promise<void> {
    const values = taskRow(task);
    const seq = ++this.saves;
    // Told now, not when it lands: on a silent store the answer may take a statement's timeout.
    this.noteSaved(values);
    const kept = this.kept.get(task.id);
    if (kept) {
      // Its writer saves the latest: an earlier state must not land after it.
      kept.values = values;
      kept.seq = seq;
      return;
    }
    // The writer its turn's lease found, as of this save's start: the turn may let go before the save fails.
    const since = this.held.get(task.id)?.writer;
    const attempt = this.pool.query(SAVE_TASK, [...values, this.newWriter()]);
    this.track(task.id, attempt);
    try {
      const { rowCount } = await attempt;
      this.isBack();
      if (!rowCount) this.log?.warn(`state store: task ${task.id} was finished otherwise (by another replica) before this state of it was saved; it stays as it finished`);
    } catch (err) {
      if (!isStoreAway(err) || this.closed) {
        // Not saved, and not kept: its turn's lease is left to expire, so that the reaper fails the task.
        const held = this.held.get(task.id);
        if (held) held.failedSave = true;
        throw err;
      }
      this.away = true;
      const keeping = this.kept.get(task.id);
      if (!keeping) return this.keepUntilBack(task.id, values, seq, since !== undefined ? since : this.held.get(task.id)?.writer);
      // Another save of the task is kept meanwhile: this one is the latest if it began last.
      if (seq > keeping.seq) {
        keeping.values = values;
        keeping.seq = seq;
      }
    }
  }

  private newWriter(): string {
    return `${this.replicaId}/${++this.writes}`;
  }

  private isBack(): void {
    if (!this.away) return;
    this.away = false;
    this.backAt = Date.now();
  }

  private track(taskId: string, attempt: Promise<unknown>): void {
    let pending = this.saving.get(taskId);
    if (!pending) this.saving.set(taskId, (pending = new Set()));
    pending.add(attempt);
    const done = () => {
      pending.delete(attempt);
      if (!pending.size && this.saving.get(taskId) === pending) this.saving.delete(taskId);
    };
    attempt.then(done, done);
  }

  /**
   * The SDK loads a task before applying each of its events. While the store is away, a task whose turn
   * runs here loads as this process last saved it, or as the turn's lease found it (no other process
   * writes it while the lease is held, but to finish it, which the save's rule keeps); any other load is
   * tried again for a few seconds. A load that fails ends the SDK's handling of the request (its client is
   * told to send the message again) while the turn would run on, unobserved: its tools would run twice.
   */
  async load(taskId: string, _context?: ServerCallContext): Promise<TaskType | undefined> {
    const kept = this.kept.get(taskId);
    if (kept) return rowTask(kept.values);
    const select = () => this.pool.query<{ data: unknown }>('SELECT data FROM forge_tasks WHERE id = $1', [taskId]);
    let rows;
    try {
      ({ rows } = await select());
    } catch (err) {
      if (!isStoreAway(err)) throw err;
      const known = await this.heldCopy(taskId);
      if (known) return known.task;
      ({ rows } = await retryWhileStoreAway(select));
    }
    return rows.length ? Task.fromJSON(rows[0].data) : undefined;
  }

  /**
   * The task as a turn holding it here knows it, for a load while the store is away: as this process last
   * saved or kept it, or as the lease found it, where `task` is undefined if the lease found no task and
   * none was saved since (a new task: the SDK loads it before its first event, before any save). The SDK
   * starts that load as the turn starts taking its lease: a lease still being taken is waited for (one that
   * cannot be taken ends its turn, and the load is tried again as any other). Undefined: no turn here knows.
   */
  private async heldCopy(taskId: string): Promise<{ task: TaskType | undefined } | undefined> {
    const held = this.held.get(taskId);
    if (!held) return undefined;
    if (!held.row && !(await held.taken.then(() => true, () => false))) return undefined;
    const kept = this.kept.get(taskId);
    if (kept) return { task: rowTask(kept.values) };
    if (held.row) return { task: rowTask(held.row) };
    if (held.found) return { task: Task.fromJSON(held.found) };
    // The lease found no row (writer null, nothing found), and no save of the task began here since: not stored yet.
    if (held.writer === null) return { task: undefined };
    return undefined;
  }

  private noteSaved(values: TaskRow): void {
    const held = this.held.get(values[0]);
    if (!held) return;
    held.row = values;
    for (const told of held.onSaved) told(values[2]);
  }

  /**
   * Writes a task's latest kept state once the store answers, unless another replica wrote the task
   * meanwhile (its reaper failed the task, or a message to it ran there): that stands.
   */
  private keepUntilBack(taskId: string, values: TaskRow, seq: number, writer: string | null | undefined): void {
    const entry: KeptTask = { values, seq, since: writer === undefined ? undefined : { writer }, settled: Promise.resolve(false) };
    this.kept.set(taskId, entry);
    this.log?.warn(`state store: cannot save task ${taskId} now (the store is away); its latest state is kept here and saved when the store is back`);
    const forget = () => {
      if (this.kept.get(taskId) === entry) this.kept.delete(taskId);
    };
    entry.settled = (async () => {
      try {
        for (;;) {
          const written = entry.values;
          const { rowCount } = await retryWhileStoreAway(() => this.writeKept(entry, written), () => this.closed);
          if (rowCount && entry.values !== written) continue; // a newer state came while this one was written: write it too
          if (!rowCount) this.log?.warn(`state store: task ${taskId} changed otherwise while this replica could not reach the store (another replica gave it up, or ran a message to it); its own last state was not saved`);
          else this.log?.info(`state store: saved task ${taskId}, kept while the store was away`);
          forget();
          return true;
        }
      } catch (err) {
        // Stopped by close(), which tries it once more and names it in the log if it is still kept.
        if (this.closed) return false;
        this.log?.warn(`state store: cannot save task ${taskId}: ${(err as Error).message}; its lease is left to expire, and the task to be failed`);
        forget();
        return false;
      }
    })();
  }

  /** One write of a kept state: over the writer before its turn or this process's own, when a turn holds the task. */
  private writeKept(entry: KeptTask, values: TaskRow) {
    if (!entry.since) return this.pool.query(SAVE_TASK, [...values, this.newWriter()]);
    return this.pool.query(SAVE_TASK_OVER, [...values, this.newWriter(), `${this.replicaId}/`, entry.since.writer]);
  }

  async list(params: ListTasksRequest, _context?: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize || DEFAULT_PAGE_SIZE;
    const cursor = await pageCursor(params.pageToken);
    const where: string[] = [];
    const values: unknown[] = [];
    if (params.contextId) where.push(`context_id = $${values.push(params.contextId)}`);
    if (params.status) where.push(`state = $${values.push(params.status)}`);
    if (params.statusTimestampAfter) where.push(`status_time > $${values.push(new Date(params.statusTimestampAfter).toISOString())}`);
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM forge_tasks ${filter}`, values);
    // After the cursor in the list's order (task-page.ts): code units compared, as the file store does.
    if (cursor) {
      const time = `$${values.push(cursor.time)}`;
      where.push(`(status_time COLLATE "C" < ${time} OR (status_time = ${time} AND id COLLATE "C" < $${values.push(cursor.id)}))`);
    }
    // One more than the page: whether there is a next page.
    const page = await this.pool.query<{ data: unknown }>(
      `SELECT data FROM forge_tasks ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY status_time COLLATE "C" DESC, id COLLATE "C" DESC LIMIT ${pageSize + 1}`,
      values,
    );
    const tasks = page.rows.slice(0, pageSize).map((r) => {
      const task = Task.fromJSON(r.data);
      if (!params.includeArtifacts) task.artifacts = [];
      return task;
    });
    const nextPageToken = page.rows.length > pageSize ? pageToken(tasks[tasks.length - 1]) : '';
    return { tasks, nextPageToken, pageSize, totalSize: Number(total.rows[0].n) };
  }

  async hold(taskId: string, onLost?: () => void): Promise<TaskLease> {
    // Another turn of the task runs here (a message to a task still working): this one runs under its lease.
    const running = this.held.get(taskId);
    if (running && running.turns > 0) {
      running.turns++;
      try {
        await running.taken;
      } catch {
        running.turns--;
        return this.hold(taskId, onLost); // the first turn could not take the lease: this one tries for itself
      }
      return this.leaseOf(taskId, running, onLost);
    }
    // The lease is its turns' own: an earlier turn letting go late (its last state kept while the store was
    // away) deletes its own lease, never this one.
    let taken!: { resolve(): void; reject(err: unknown): void };
    const held: HeldTask = {
      owner: `${this.replicaId}:${randomUUID().slice(0, 8)}`,
      turns: 1,
      taken: new Promise<void>((resolve, reject) => (taken = { resolve, reject })),
      row: running?.row,
      onSaved: new Set(),
      onLost: new Set(),
    };
    held.taken.catch(() => {});
    this.held.set(taskId, held);
    const lease = `now() + ${Number(this.leaseMs)} * interval '1 millisecond'`;
    // A new turn of the task starts with no cancel request: one left for an earlier turn whose lease was
    // taken over (its holder died before the reaper came) is not this turn's. The task comes back as
    // stored, for loads while the store is away (a save made meanwhile is newer, and stands), with its
    // writer, over which a state kept under this lease may land.
    let leased;
    try {
      leased = await this.pool.query<{ data: unknown; writer: string | null; state: number }>(
        `WITH cleared AS (DELETE FROM forge_task_cancels WHERE task_id = $1),
         leased AS (INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ($1, $2, ${lease}) ON CONFLICT (task_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at)
         SELECT data, writer, state FROM forge_tasks WHERE id = $1`,
        [taskId, held.owner],
      );
    } catch (err) {
      if (this.held.get(taskId) === held) {
        if (running) this.held.set(taskId, running);
        else this.held.delete(taskId);
      }
      taken.reject(err);
      throw err;
    }
    const stored = leased.rows[0];
    held.writer = stored ? stored.writer : null;
    held.found = stored?.data;
    taken.resolve();
    // Canceled on another replica before this turn took the lease (the SDK had let the message in): a request
    // is kept only under a lease, and its notification may have been lost.
    if (stored?.state === TaskState.TASK_STATE_CANCELED) this.onCancelFound?.(taskId);
    // Each renewal also asks whether the task was cancelled: a cancel reaches this replica within a third of
    // a lease even when its notification did not. A request is kept only while a lease exists; one that came
    // before this turn took its lease left the task saved canceled, which no turn runs on.
    const renewal = `UPDATE forge_task_leases SET expires_at = ${lease} WHERE task_id = $1 AND owner = $2
      RETURNING EXISTS (SELECT 1 FROM forge_task_cancels WHERE task_id = $1) OR EXISTS (SELECT 1 FROM forge_tasks WHERE id = $1 AND state = ${TaskState.TASK_STATE_CANCELED}) AS cancelled`;
    held.renew = setInterval(
      () =>
        void this.pool
          .query<{ cancelled: boolean }>(renewal, [taskId, held.owner])
          .then(({ rows }) => {
            this.isBack();
            if (rows.length === 0) {
              // Reaped (or taken over) while this process could not renew it: the task is no longer its own,
              // and a later turn of it takes a lease of its own.
              clearInterval(held.renew);
              if (this.held.get(taskId) === held) this.held.delete(taskId);
              // A state kept under the lease is still written by its rule (only if no other replica wrote the
              // task since), but is no longer what this process's loads and saves of the task build on: the
              // turn's account of the loss, saved next, would join it and be refused with it, the reaper
              // having written the task, where on its own it lands over the reaper's failure.
              this.kept.delete(taskId);
              for (const lost of [...held.onLost]) lost();
            } else if (rows[0].cancelled) this.onCancelFound?.(taskId);
          })
          .catch((err: unknown) => {
            if (isStoreAway(err)) this.away = true;
          }),
      Math.max(100, this.leaseMs / 3),
    );
    held.renew.unref();
    return this.leaseOf(taskId, held, onLost);
  }

  /** One turn's hold on the task's lease; the last turn's release lets the lease go. */
  private leaseOf(taskId: string, held: HeldTask, onLost?: () => void): TaskLease {
    if (onLost) held.onLost.add(onLost);
    // The states saved for the task from this turn's start.
    const seen = new Set<number>();
    const note = (state: number) => void seen.add(state);
    held.onSaved.add(note);
    return {
      release: async (lastState) => {
        // The turn's last state is published as it ends, and saved by the SDK after: the lease covers it.
        const saved = lastState === undefined || seen.has(lastState) || (await this.savedWithin(held, lastState));
        held.onSaved.delete(note);
        if (onLost) held.onLost.delete(onLost);
        if (--held.turns > 0) return;
        await this.letGo(taskId, held, saved);
      },
    };
  }

  /** Whether `state` is saved or kept for the task within a few seconds (the SDK may not save it: the task finished otherwise). */
  private savedWithin(held: HeldTask, state: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const finish = (saved: boolean) => {
        clearTimeout(timer);
        held.onSaved.delete(told);
        resolve(saved);
      };
      const told = (saved: number) => saved === state && finish(true);
      const timer = setTimeout(() => finish(false), LAST_SAVE_WAIT_MS);
      timer.unref();
      held.onSaved.add(told);
    });
  }

  /**
   * Lets the lease go once the task's last state is in the store: at once, or, while the store is away or
   * the state waits for it, in the background, renewing the lease meanwhile so that no reaper fails a
   * task whose answer is on its way. A last state that was not saved (the SDK stopped, or its write was
   * given up) leaves the lease to expire: the reaper then fails the task, rather than leave it working.
   */
  private async letGo(taskId: string, held: HeldTask, saved: boolean): Promise<void> {
    const stop = () => {
      clearInterval(held.renew);
      if (this.held.get(taskId) === held) this.held.delete(taskId);
    };
    // Its cancel request, if any, goes with it (the table's key cascades).
    const remove = () => this.pool.query('DELETE FROM forge_task_leases WHERE task_id = $1 AND owner = $2', [taskId, held.owner]);
    // Saves under way end landed, failed or kept: on a store that answers, in a moment.
    const underWay = () => (this.saving.has(taskId) ? Promise.allSettled(this.saving.get(taskId)!) : undefined);
    // Its last state never saved: the lease is left to expire, and the reaper to fail the task.
    if (!saved) return stop();
    const waited = delay(LAST_SAVE_WAIT_MS).then(() => 'waited' as const);
    for (let pending = underWay(); pending; pending = underWay()) {
      if ((await Promise.race([pending, waited])) === 'waited') break;
    }
    if (held.failedSave) return stop();
    if (!this.kept.has(taskId) && !this.saving.has(taskId)) {
      try {
        await retryWhileStoreAway(remove);
        return stop();
      } catch (err) {
        if (!isStoreAway(err)) {
          stop();
          throw err;
        }
      }
    }
    void (async () => {
      for (let pending = underWay(); pending; pending = underWay()) await pending;
      if (held.failedSave) return stop();
      if ((await this.kept.get(taskId)?.settled) !== false) await retryWhileStoreAway(remove, () => this.closed).catch(() => {});
      stop();
    })();
  }

  /**
   * Keeps a cancel request for the task while a turn holds its lease. None is kept for a task no turn
   * runs: there is nothing to stop, and nothing would remove it.
   */
  async keepCancel(taskId: string): Promise<void> {
    try {
      await this.pool.query('INSERT INTO forge_task_cancels (task_id) VALUES ($1) ON CONFLICT (task_id) DO NOTHING', [taskId]);
    } catch (err) {
      if ((err as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw err; // no lease: no turn runs it
    }
  }

  /**
   * Checks for expired leases every half lease, unless the store was away lately. Back from an outage
   * longer than a lease, every lease has expired, and holders that were cut off with this process renew
   * within a third of a lease once back: it waits two leases of contact first, as it does when it starts
   * (holders may be back only now). A replica cut off alone is reaped by those that were not.
   */
  startReaper(): void {
    this.backAt = Date.now();
    this.reaper = setInterval(
      () =>
        void this.reapIfSure().then(
          () => this.reaping.succeeded(),
          (err: unknown) => {
            if (isStoreAway(err)) this.away = true;
            this.reaping.failed(err);
          },
        ),
      Math.max(200, this.leaseMs / 2),
    );
    this.reaper.unref();
  }

  private async reapIfSure(): Promise<void> {
    // A probe that must answer quickly first: on a silent store, a reap held up would run as soon as the
    // store answers, before the holders renew, and no error would have said the store was away.
    await this.pool.query({ text: 'SELECT 1', query_timeout: Math.max(100, this.leaseMs / 3) } as QueryConfig);
    this.isBack();
    if (Date.now() - this.backAt < 2 * this.leaseMs) return;
    await this.reapExpired();
  }

  stopReaper(): void {
    if (this.reaper) clearInterval(this.reaper);
  }

  /**
   * Stops the reaper and the writers of kept states, after one last try of each (the store may be back,
   * the writer waiting to try again), for as long as `until` leaves; the states still kept are lost, and said so in the log.
   */
  async close(until: Promise<unknown> = delay(2000)): Promise<void> {
    this.stopReaper();
    this.closed = true;
    const lastTries = [...this.kept].map(async ([taskId, entry]) => {
      await this.writeKept(entry, entry.values);
      if (this.kept.get(taskId) === entry) this.kept.delete(taskId);
    });
    await Promise.race([Promise.allSettled(lastTries), until]);
    if (this.kept.size) this.log?.warn(`state store: closing with the latest state of task ${[...this.kept.keys()].join(', ')} unsaved (the store was away)`);
  }

  /** Fails the unfinished tasks whose lease expired; returns their ids. */
  async reapExpired(): Promise<string[]> {
    const { rows } = await this.pool.query<{ task_id: string; owner: string }>(
      `DELETE FROM forge_task_leases WHERE task_id IN (SELECT task_id FROM forge_task_leases WHERE expires_at < now() FOR UPDATE SKIP LOCKED) RETURNING task_id, owner`,
    );
    const failed: string[] = [];
    for (const { task_id, owner } of rows) {
      if (!(await this.failLoaded(task_id, 'the replica running this task stopped before it finished'))) continue;
      failed.push(task_id);
      // The one line that says where a task went: its replica died (or lost the store) mid-turn.
      this.log?.warn(`state store: failed task ${task_id}: replica ${owner.replace(/:[^:]*$/, '')} stopped renewing its lease (${Number(this.leaseMs)} ms) before the task finished`);
    }
    return failed;
  }

  /** Marks an unfinished task failed (a finished or paused one is left as it is): at a stop, its own turns' tasks, through save. */
  async fail(taskId: string, reason: string): Promise<boolean> {
    const task = await this.load(taskId);
    const failed = task && failTask(task, reason);
    if (failed) await this.save(failed);
    return Boolean(failed);
  }

  /**
   * The reaper's failing of a task another replica ran: read from the store, and written only if its row
   * is still in that state. A turn cut off from the store may save its own account (failed, saying why)
   * between the read and this write, and that account, not "stopped before it finished", is what its
   * client should read.
   */
  async failLoaded(taskId: string, reason: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ state: number; data: unknown }>('SELECT state, data FROM forge_tasks WHERE id = $1', [taskId]);
    if (!rows.length) return false;
    const failed = failTask(Task.fromJSON(rows[0].data), reason);
    if (!failed) return false;
    const values = taskRow(failed);
    const [id, , state, statusTime, data] = values;
    const { rowCount } = await this.pool.query(FAIL_IF_UNCHANGED, [id, state, statusTime, data, this.newWriter(), rows[0].state]);
    if (rowCount) this.noteSaved(values);
    return Boolean(rowCount);
  }
}
