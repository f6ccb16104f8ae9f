/**
 * Schedules in Postgres: the run-time tasks (the limit checked inside the
 * transaction that adds one), their history, and their due times. Each
 * replica asks for the entries due now; `FOR UPDATE SKIP LOCKED` hands each
 * row to one replica at a time, which moves the due time on and records the
 * firing under a unique (schedule, due time) key — so every due time fires
 * exactly once across the fleet, `@every` included (its next time is
 * counted from the due time kept in the database, not from a replica's
 * memory).
 */
import type { Pool } from 'pg';
import { inTransaction } from './pool-client.ts';
import { storedJson } from './postgres-text.ts';
import { HISTORY_LIMIT, ScheduleStoreError } from '../scheduler/schedule-store.ts';
import { scheduleKey, type FiringRecord, type ScheduledTask } from '../scheduler/scheduled-task.ts';
import type { ScheduleEntry, ScheduleRecords } from './store.ts';

/** pg_advisory_xact_lock key serializing schedule_set's limit check. */
const SCHEDULE_LOCK = 0x666f726765_02;
/** Trim the history and the firing keys once per this many appends. */
const TRIM_EVERY = 50;

/** The due row's key of a schedule set at run time. */
const dueKey = (id: string) => scheduleKey({ source: 'runtime', id });

interface ScheduleRow {
  id: string;
  cron: string;
  task: string;
  timezone: string | null;
  created_at: string;
  updated_at: string;
}

export class PostgresSchedules implements ScheduleRecords {
  private next: Record<string, string | undefined> = {};
  private appends = 0;

  constructor(
    private readonly pool: Pool,
    private readonly replicaId: string,
  ) {}

  async runtimeTasks(): Promise<ScheduledTask[]> {
    const { rows } = await this.pool.query<ScheduleRow>('SELECT id, cron, task, timezone, created_at, updated_at FROM forge_schedules ORDER BY seq');
    return rows.map(toTask);
  }

  async saveTask(task: Omit<ScheduledTask, 'source' | 'created_at' | 'updated_at'>, limit: number, now = new Date()): Promise<{ created: boolean; task: ScheduledTask }> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEDULE_LOCK]);
      const existing = await client.query<{ created_at: string }>('SELECT created_at FROM forge_schedules WHERE id = $1', [task.id]);
      if (!existing.rows.length) {
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM forge_schedules');
        if (Number(rows[0].n) >= limit) {
          throw new ScheduleStoreError(`there are already ${rows[0].n} run-time schedules (the limit)`, 'delete one with schedule_delete first', 'FORGE_SCHEDULE_LIMIT');
        }
      }
      const at = now.toISOString();
      const created_at = existing.rows[0]?.created_at ?? at;
      // A new schedule starts with no due time: a check that read the id's deleted predecessor just before
      // its deletion may have put its due row back, and the new schedule would fire at that old time.
      if (!existing.rows.length) await client.query('DELETE FROM forge_schedule_due WHERE key = $1', [dueKey(task.id)]);
      await client.query(
        `INSERT INTO forge_schedules (id, cron, task, timezone, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET cron = EXCLUDED.cron, task = EXCLUDED.task, timezone = EXCLUDED.timezone, updated_at = EXCLUDED.updated_at`,
        [task.id, task.cron, task.task, task.timezone ?? null, created_at, at],
      );
      return { created: !existing.rows.length, task: toTask({ id: task.id, cron: task.cron, task: task.task, timezone: task.timezone ?? null, created_at, updated_at: at }) };
    });
  }

  async deleteTask(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM forge_schedules WHERE id = $1', [id]);
    await this.pool.query('DELETE FROM forge_schedule_due WHERE key = $1', [dueKey(id)]);
    return Boolean(rowCount);
  }

  async appendHistory(record: FiringRecord): Promise<void> {
    await this.pool.query('INSERT INTO forge_schedule_history (task_id, record) VALUES ($1, $2::jsonb)', [record.id, storedJson(record)]);
    if (++this.appends % TRIM_EVERY === 0) {
      await this.pool.query('DELETE FROM forge_schedule_history WHERE seq <= (SELECT max(seq) FROM forge_schedule_history) - $1', [HISTORY_LIMIT]);
      await this.pool.query(`DELETE FROM forge_schedule_firings WHERE claimed_at < now() - interval '1 day'`);
    }
  }

  async history(options: { id?: string; limit?: number } = {}): Promise<FiringRecord[]> {
    const values: unknown[] = [];
    const where = options.id ? `WHERE task_id = $${values.push(options.id)}` : '';
    const limit = options.limit ? `LIMIT ${Math.max(0, Math.floor(options.limit))}` : '';
    const { rows } = await this.pool.query<{ record: FiringRecord }>(`SELECT record FROM forge_schedule_history ${where} ORDER BY seq DESC ${limit}`, values);
    return rows.map((r) => r.record);
  }

  async claimDue(entries: readonly ScheduleEntry[], now: Date): Promise<{ key: string; scheduledFor: Date }[]> {
    const byKey = new Map(entries.map((e) => [e.key, e]));
    // Every check makes sure each entry has its due row: no memory of "already inserted" decides
    // it, since schedule_delete on any replica removes the row (a schedule deleted and set again
    // between two checks would otherwise never fire again). A new schedule, or a changed
    // expression, starts at its next time after now; replicas agree on the first writer's. Rows
    // that exist with the same signature are left alone and not locked (only changed ones are
    // updated), so this does not get in the way of another replica's claim. Sorted: one lock order.
    const fresh = [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    if (fresh.length) {
      await this.pool.query(
        `WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v (key, signature, next_due)),
         changed AS (UPDATE forge_schedule_due d SET signature = v.signature, next_due = v.next_due FROM v WHERE d.key = v.key AND d.signature <> v.signature RETURNING d.key)
         INSERT INTO forge_schedule_due (key, signature, next_due) SELECT key, signature, next_due FROM v ON CONFLICT (key) DO NOTHING`,
        [fresh.map((e) => e.key), fresh.map((e) => e.signature), fresh.map((e) => e.schedule.nextAfter(now) ?? null)],
      );
    }

    const { claimed, next } = await inTransaction(this.pool, async (client) => {
      const claimed: { key: string; scheduledFor: Date }[] = [];
      const { rows } = await client.query<{ key: string; signature: string; next_due: Date }>(
        'SELECT key, signature, next_due FROM forge_schedule_due WHERE key = ANY($1) AND next_due <= $2 FOR UPDATE SKIP LOCKED',
        [[...byKey.keys()], now],
      );
      for (const row of rows) {
        const entry = byKey.get(row.key)!;
        if (row.signature !== entry.signature) continue; // another replica changed it; the next check sees the new one
        let due = entry.schedule.nextAfter(row.next_due);
        if (due && due <= now) due = entry.schedule.nextAfter(now);
        await client.query('UPDATE forge_schedule_due SET next_due = $2 WHERE key = $1', [row.key, due ?? null]);
        const firing = await client.query('INSERT INTO forge_schedule_firings (key, due_time, replica) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [row.key, row.next_due, this.replicaId]);
        if (firing.rowCount) claimed.push({ key: row.key, scheduledFor: row.next_due });
      }
      const next = await client.query<{ key: string; next_due: Date | null }>('SELECT key, next_due FROM forge_schedule_due WHERE key = ANY($1)', [[...byKey.keys()]]);
      return { claimed, next: next.rows };
    });
    this.next = Object.fromEntries(next.map((r) => [r.key, r.next_due?.toISOString()]));
    return claimed;
  }

  nextDue(): Record<string, string | undefined> {
    return this.next;
  }
}

function toTask(row: ScheduleRow): ScheduledTask {
  return { id: row.id, cron: row.cron, task: row.task, ...(row.timezone ? { timezone: row.timezone } : {}), source: 'runtime', created_at: row.created_at, updated_at: row.updated_at };
}
