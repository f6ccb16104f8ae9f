/**
 * The `postgres://` state store: what many replicas of one agent share.
 * Loaded (with the `pg` client bundled into the runtime core) only when the
 * state URL names Postgres. Opening it runs the migrations once under an
 * advisory lock, starts the LISTEN connection (cancel requests, freed
 * turns, forged tools) and the lease reaper.
 */
import { randomUUID } from 'node:crypto';
import { delay } from '../duration.ts';
import pg from './pg-client.ts';
import type { Logger } from '../tools/model.ts';
import { FILE_ID_PATTERN } from './file-records.ts';
import { openPool } from './pool-client.ts';
import { migrate, MIGRATIONS } from './postgres-migrations.ts';
import { PostgresConversations } from './postgres-conversations.ts';
import { PostgresForged, removeSessionToolsNow } from './postgres-forged.ts';
import { pruneForgedBookkeeping } from './postgres-forged-bookkeeping.ts';
import { PostgresNotifications } from './postgres-notifications.ts';
import { PostgresPushConfigs } from './postgres-push-configs.ts';
import { PostgresSchedules } from './postgres-schedules.ts';
import { SWEEP_BATCH, sweepExpiredConversations, sweepExpiredTasks } from './postgres-retention.ts';
import { scheduleSweeps } from './sweep-schedule.ts';
import { PostgresTasks } from './postgres-tasks.ts';
import { redact } from './shown-url.ts';
import type { CancelChannel, FileRecords, StateStore } from './store.ts';

export interface PostgresStoreOptions {
  url: string;
  /** How long a turn's hold and a task's lease last without renewal (a dead replica's work is given up after this). */
  leaseMs: number;
  /** How long a finished task is kept after its last update (FORGE_TASK_RETENTION); undefined: forever. */
  taskRetentionMs?: number;
  /** How long a conversation is kept after its last turn (FORGE_CONVERSATION_RETENTION); undefined (the default): forever. */
  conversationRetentionMs?: number;
  /** Whether this process sweeps (the long-running server only: open-store.ts's `sweeps`). */
  sweeps?: boolean;
  /** How often this replica sweeps (default hourly, the first within minutes of the start: sweep-schedule.ts; tests shorten it). */
  sweepEveryMs?: number;
  log?: Logger;
  poolSize?: number;
  /** How long a connection may take to open (default 10 s), and a statement to answer (default 60 s): a store gone silent (a network partition, a failover that moved the address) is the store away after that, not a hang for as long as TCP keeps trying (many minutes). */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** How long a migration keeps trying for a table another session keeps locked before the store does not open (default 1 min). */
  migrationDeadlineMs?: number;
}

export interface PostgresStateStore extends StateStore {
  tasks: PostgresTasks;
  pushConfigs: PostgresPushConfigs;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStateStore> {
  const replicaId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const config = { connectionString: options.url, application_name: `forge-${replicaId}` };
  const connectionTimeoutMillis = options.connectTimeoutMs ?? 10_000;
  const queryTimeout = options.queryTimeoutMs ?? 60_000;
  const pool = openPool({ ...config, max: options.poolSize ?? 10, connectionTimeoutMillis, query_timeout: queryTimeout }, options.log);
  try {
    // Migrations run without the statement timeout: another replica may hold the migration lock for as
    // long as its migration takes, and a migration may take longer than any everyday statement.
    const migrating = openPool({ ...config, max: 1, connectionTimeoutMillis }, options.log);
    const { newer } = await migrate(migrating, options.migrationDeadlineMs).finally(() => migrating.end().catch(() => {}));
    if (newer) options.log?.warn(`state store: its schema is version ${newer}, from a newer Forge; this one knows ${MIGRATIONS.length} and goes on without what came after (run the newer Forge where you can)`);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  const notifications = new PostgresNotifications(() => new pg.Client({ ...config, connectionTimeoutMillis, query_timeout: queryTimeout }), options.log, queryTimeout ? Math.min(queryTimeout, 15_000) : undefined);
  await notifications.start();
  // Cancel requests come by notification, and, for a task whose turn runs here, with the lease's renewal.
  const cancelListeners = new Set<(taskId: string) => void>();
  const tasks = new PostgresTasks(pool, replicaId, options.leaseMs, options.log, (taskId) => {
    for (const listener of [...cancelListeners]) listener(taskId);
  });
  tasks.startReaper();
  const pushConfigs = new PostgresPushConfigs(pool);
  // Hourly, on every replica that serves, the first within minutes of its start, with or without a retention (a sweep
  // finds little: forge_tool's call counts past their minute and removals past their day; the configs of tasks never
  // saved, past a day; the finished tasks and conversations past their retention, in batches that replicas sweeping
  // at once do not share).
  const { taskRetentionMs, conversationRetentionMs } = options;
  const sweep = () => {
    void pruneForgedBookkeeping(pool, SWEEP_BATCH).catch((err: Error) => options.log?.warn(`state store: cannot prune forge_tool's call counts and removals: ${err.message}; tried again in an hour`));
    void pushConfigs.sweep().catch((err: Error) => options.log?.warn(`state store: cannot sweep the push configs of tasks never saved: ${err.message}; tried again in an hour`));
    if (taskRetentionMs !== undefined) {
      void sweepExpiredTasks(pool, { retentionMs: taskRetentionMs }, options.log).catch((err: Error) => options.log?.warn(`state store: cannot delete the finished tasks past FORGE_TASK_RETENTION: ${err.message}; tried again in an hour`));
    }
    if (conversationRetentionMs !== undefined) {
      void sweepExpiredConversations(pool, { retentionMs: conversationRetentionMs }, options.log).catch((err: Error) => options.log?.warn(`state store: cannot delete the conversations past FORGE_CONVERSATION_RETENTION: ${err.message}; tried again in an hour`));
    }
  };
  const sweeping = options.sweeps ? scheduleSweeps(sweep, options.sweepEveryMs) : undefined;

  const cancels: CancelChannel = {
    request: async (taskId) => {
      const id = taskId.slice(0, 1000);
      await pool.query("SELECT pg_notify('forge_cancel', $1)", [id]);
      // For a runner that missed the notification; the notification went out whatever becomes of this.
      await tasks.keepCancel(id).catch((err: Error) => options.log?.warn(`state store: cannot keep the cancel request of task ${id}: ${err.message}`));
    },
    subscribe: (listener) => {
      cancelListeners.add(listener);
      const off = notifications.on('forge_cancel', listener);
      return () => {
        cancelListeners.delete(listener);
        off();
      };
    },
  };
  const files: FileRecords = {
    async put(file) {
      const id = randomUUID();
      await pool.query('INSERT INTO forge_files (id, name, media_type, content) VALUES ($1, $2, $3, $4)', [id, file.name, file.mediaType, file.content]);
      return id;
    },
    async get(id) {
      if (!FILE_ID_PATTERN.test(id)) return undefined;
      const { rows } = await pool.query<{ name: string; media_type: string; content: Buffer }>('SELECT name, media_type, content FROM forge_files WHERE id = $1', [id]);
      return rows.length ? { id, name: rows[0].name, mediaType: rows[0].media_type, content: rows[0].content } : undefined;
    },
  };

  return {
    kind: 'postgres',
    shared: true,
    where: redact(options.url),
    replicaId,
    conversations: new PostgresConversations(pool, notifications, replicaId, options.leaseMs),
    tasks,
    pushConfigs,
    cancels,
    schedules: new PostgresSchedules(pool, replicaId),
    files,
    forged: new PostgresForged(pool, notifications),
    removeSessionTools: (owners) => removeSessionToolsNow(pool, owners),
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      // A silent store answers neither the last tries of kept states, nor the LISTEN connection's end, nor
      // the statements still under way (they end at their timeout): closing waits 2 s in all, then leaves
      // them, so a stop stops.
      const until = delay(2000);
      sweeping?.stop();
      await tasks.close(until);
      await Promise.race([Promise.all([notifications.close(), pool.end()]), until]);
    },
  };
}
