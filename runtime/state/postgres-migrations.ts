/**
 * The Postgres schema, as numbered migrations applied once each under a
 * session advisory lock: when many pods start together, one migrates and
 * the others wait, then find nothing left to do.
 */
import type { Pool } from 'pg';
import { delay } from '../duration.ts';
import { withClient } from './pool-client.ts';

/** pg_advisory_lock key for migrations ("forge" + 1 as a number). */
export const MIGRATION_LOCK = 0x666f726765_01;
/**
 * How long a migration waits for a table's lock before it lets go and tries again a moment later. A
 * migration that alters a table in use queues behind a long transaction that reads it (pg_dump, a
 * report), and every replica's statements on that table would queue behind the migration.
 */
const TABLE_LOCK_WAIT = '2s';
/** How long a migration keeps trying for its tables' locks before the store does not open (the default). */
export const MIGRATION_LOCK_DEADLINE_MS = 60_000;
/** Postgres's SQLSTATE for a lock not got within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE forge_conversations (
     id text PRIMARY KEY,
     version bigint NOT NULL DEFAULT 0,
     data jsonb NOT NULL,
     turn_owner text,
     turn_expires timestamptz,
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE forge_tasks (
     id text PRIMARY KEY,
     context_id text NOT NULL,
     state integer NOT NULL,
     status_time text NOT NULL DEFAULT '',
     data jsonb NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX forge_tasks_context ON forge_tasks (context_id);
   CREATE TABLE forge_task_leases (
     task_id text PRIMARY KEY,
     owner text NOT NULL,
     expires_at timestamptz NOT NULL
   );
   CREATE TABLE forge_schedules (
     id text PRIMARY KEY,
     cron text NOT NULL,
     task text NOT NULL,
     timezone text,
     created_at text NOT NULL,
     updated_at text NOT NULL,
     seq bigserial
   );
   CREATE TABLE forge_schedule_due (
     key text PRIMARY KEY,
     signature text NOT NULL,
     next_due timestamptz
   );
   CREATE TABLE forge_schedule_firings (
     key text NOT NULL,
     due_time timestamptz NOT NULL,
     replica text NOT NULL,
     claimed_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (key, due_time)
   );
   CREATE TABLE forge_schedule_history (
     seq bigserial PRIMARY KEY,
     task_id text NOT NULL,
     record jsonb NOT NULL
   );
   CREATE INDEX forge_schedule_history_task ON forge_schedule_history (task_id, seq);
   CREATE TABLE forge_files (
     id uuid PRIMARY KEY,
     name text NOT NULL,
     media_type text NOT NULL,
     content bytea NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   );`,
  // Forged tools shared by the replicas: the record as forge_tool wrote it (json keeps its text as
  // written), and forge_tool's calls per session for calls_per_minute.
  `CREATE TABLE forge_forged_tools (
     seq bigserial,
     name text PRIMARY KEY,
     owner text,
     record json NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE forge_forge_calls (
     session text NOT NULL,
     at timestamptz NOT NULL DEFAULT clock_timestamp()
   );
   CREATE INDEX forge_forge_calls_session ON forge_forge_calls (session, at);`,
  // Forged tools removed: the row leaves forge_forged_tools (so a replica on older code, which reads
  // only that table, neither registers it again nor counts it), and a removal takes a seq from the
  // same sequence, so replicas that follow the seq drop the tool of that name and forgedAt.
  `CREATE TABLE forge_forged_removals (
     seq bigint PRIMARY KEY,
     name text NOT NULL,
     forged_at text NOT NULL,
     removed_at timestamptz NOT NULL DEFAULT now()
   );`,
  // Cancel requests for tasks whose turns run now (they hold a lease): the replica running one finds
  // its request when it renews the lease, if the notification never reached it (its LISTEN
  // connection was down). The key ties each to its lease: none is kept for a task no turn runs, the
  // insert waits for a release under way, and it goes with the lease, whoever deletes that (a
  // release, the reaper, a replica on older code).
  `CREATE TABLE forge_task_cancels (
     task_id text PRIMARY KEY REFERENCES forge_task_leases (task_id) ON DELETE CASCADE,
     requested_at timestamptz NOT NULL DEFAULT now()
   );`,
  // Who wrote each task last: a replica's writer id and the write's number, so that a state kept while
  // the store was away lands only if no one else wrote the task meanwhile. Every write gets a new
  // value: one that names none (a replica on older code, which does not know the column) gets one no
  // replica's check accepts, from the default or the trigger. Rows from before stay NULL until written.
  // The trigger also keeps a finished task as it first finished (A2A's TaskState: completed 3, failed 4,
  // canceled 5, rejected 7), for every writer: this Forge's saves rely on it, and replicas on older code get it too.
  `ALTER TABLE forge_tasks ADD COLUMN writer text;
   CREATE SEQUENCE forge_tasks_unnamed_writer;
   ALTER TABLE forge_tasks ALTER COLUMN writer SET DEFAULT 'unnamed/' || nextval('forge_tasks_unnamed_writer');
   CREATE FUNCTION forge_tasks_before_update() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF OLD.state IN (3, 4, 5, 7) AND NEW.state <> OLD.state THEN
       RETURN NULL;
     END IF;
     IF NEW.writer IS NOT DISTINCT FROM OLD.writer THEN
       NEW.writer := 'unnamed/' || nextval('forge_tasks_unnamed_writer');
     END IF;
     RETURN NEW;
   END $$;
   CREATE TRIGGER forge_tasks_before_update BEFORE UPDATE ON forge_tasks FOR EACH ROW EXECUTE PROCEDURE forge_tasks_before_update();`,
  // A2A push notification configs (webhooks), by task: no key to forge_tasks, since message/send sets one
  // before its task is first saved. The config as the client gave it, and the protocol version it came over.
  `CREATE TABLE forge_push_configs (
     task_id text NOT NULL,
     id text NOT NULL,
     wire_version text NOT NULL,
     config jsonb NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (task_id, id)
   );`,
  // A task's push configs go with it, whoever deletes its row (an operator's clean-up, a later Forge): in the
  // same transaction, by the database. A set on the task holds a key-share lock on its row as it saves (Forge's
  // saveWithin), so a delete waits for it and this one, a later statement, sees and deletes what it saved.
  `CREATE FUNCTION forge_tasks_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     DELETE FROM forge_push_configs WHERE task_id = OLD.id;
     RETURN NULL;
   END $$;
   CREATE TRIGGER forge_tasks_after_delete AFTER DELETE ON forge_tasks FOR EACH ROW EXECUTE PROCEDURE forge_tasks_after_delete();`,
  // Configs kept before their task's first save (message/send's): marked, so that those whose task never
  // came to be (its replica stopped in between) are found without reading every config (PostgresPushConfigs.sweep).
  `ALTER TABLE forge_push_configs ADD COLUMN before_task boolean NOT NULL DEFAULT false;
   CREATE INDEX forge_push_configs_before_task ON forge_push_configs (updated_at) WHERE before_task;`,
  // Whether each config's webhook took its task's final state (PushConfigRecords.finals): those that did not are
  // tried again by whichever replica looks next. Configs of tasks already finished count as settled: what was
  // sent before this migration is not known, and sending every old task's end again would flood the webhooks.
  `ALTER TABLE forge_push_configs ADD COLUMN final_settled boolean NOT NULL DEFAULT false,
     ADD COLUMN final_tries integer NOT NULL DEFAULT 0,
     ADD COLUMN final_retry_at timestamptz;
   UPDATE forge_push_configs c SET final_settled = true FROM forge_tasks t WHERE t.id = c.task_id AND t.state IN (3, 4, 5, 7);
   CREATE INDEX forge_push_configs_unsettled ON forge_push_configs (task_id) WHERE NOT final_settled;`,
  // The newest seq of the forged-tool removals the sweep deleted (postgres-forged-bookkeeping.ts): a
  // replica that has not read that far may have missed one, and reads every tool anew instead. One row.
  `CREATE TABLE forge_forged_pruned (
     one boolean PRIMARY KEY DEFAULT true CHECK (one),
     through bigint NOT NULL
   );
   INSERT INTO forge_forged_pruned (through) VALUES (0);`,
];

/**
 * Applies the migrations this database has not seen; returns how many ran, and the schema version a
 * newer Forge left (a rollback), which this one does not know: it goes on, as a replica on older
 * code does during a rolling upgrade, and the caller says so.
 */
export async function migrate(pool: Pool, lockDeadlineMs = MIGRATION_LOCK_DEADLINE_MS): Promise<{ ran: number; newer?: number }> {
  return withClient(pool, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS forge_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM forge_migrations');
      const applied = rows[0]?.version ?? 0;
      if (applied > MIGRATIONS.length) return { ran: 0, newer: applied };
      let ran = 0;
      for (let version = applied + 1; version <= MIGRATIONS.length; version++) {
        const started = Date.now();
        const deadline = started + lockDeadlineMs;
        for (;;) {
          await client.query('BEGIN');
          try {
            await client.query(`SET LOCAL lock_timeout = '${TABLE_LOCK_WAIT}'`);
            await client.query(MIGRATIONS[version - 1]);
            await client.query('INSERT INTO forge_migrations (version) VALUES ($1)', [version]);
            await client.query('COMMIT');
            break;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => {});
            if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
            if (Date.now() > deadline) {
              throw new Error(`schema migration ${version} waited ${Math.round((Date.now() - started) / 1000)} s for a table another session kept locked (a long transaction: pg_dump, a report?); it is tried again at the next start`, { cause: err });
            }
            await delay(1000);
          }
        }
        ran++;
      }
      return { ran };
    } finally {
      // A lost connection gives up its session lock by itself; unlocking matters only on a live one.
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  });
}
