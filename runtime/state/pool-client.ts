/**
 * The state store's connection pool, and work on one client checked out of
 * it. A `pg` client whose connection drops emits 'error', and an 'error'
 * nobody hears ends the process. The pool listens only on its idle clients;
 * a client can lose its connection while it is checked out (Postgres
 * restarts, an admin ends the backend, a failover), or even before its
 * first holder could listen: the ReadyForQuery that completes a connect and
 * the FATAL that follows can arrive in one read. So every client gets a
 * listener at birth, and a lost client is destroyed on release, not pooled.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import type { Logger } from '../tools/model.ts';
import pg from './pg-client.ts';
import { isStoreAway } from '../store-unavailable.ts';

const connectionLost = Symbol('connectionLost');
type TrackedClient = PoolClient & { [connectionLost]?: Error };

/**
 * How often Postgres checks, while it runs a statement, that the client is still there. A statement this
 * process stopped waiting for (past its timeout) has its connection dropped; without the check, a server
 * that is reachable but slow (a lock wait) would go on with it, and take and hold the lock, until it
 * ended by itself. Postgres 14+ on Linux, 15+ on macOS and the BSDs; on older servers the statement sets
 * nothing (the parameter is not in pg_settings), and where the server refuses the value it is not tried again.
 * Set already (on the role, as behind a pooler that shares server connections), it is left as it is.
 */
const CLIENT_CHECK = "SELECT set_config(name, '2s', false) FROM pg_settings WHERE name = 'client_connection_check_interval' AND setting = '0'";

export function openPool(config: PoolConfig, log?: Logger): Pool {
  let checkRefused = false;
  const pool = new pg.Pool({
    ...config,
    // Awaited before the client is handed out, so its holder's first statement is not queued behind it.
    // A connection lost meanwhile fails the connect, as a store away (the pool ends the client).
    onConnect: async (connected) => {
      const client = connected as TrackedClient;
      client.on('error', (err) => {
        client[connectionLost] ??= err;
      });
      if (checkRefused) return;
      await client.query(CLIENT_CHECK).catch((err: unknown) => {
        if (isStoreAway(err)) throw err;
        checkRefused = true;
      });
    },
  });
  // An idle client that loses its connection is dropped by the pool, which then reports it here.
  pool.on('error', (err) => log?.warn(`state store: ${err.message}`));
  return pool;
}

export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client: TrackedClient = await pool.connect();
  // A client whose statement found the store away is not pooled again: its connection may be gone, still
  // busy with a statement that timed out, or on a node that takes no writes.
  let away: Error | undefined;
  try {
    return await work(client);
  } catch (err) {
    if (isStoreAway(err)) away = err as Error;
    throw err;
  } finally {
    client.release(client[connectionLost] ?? away);
  }
}

/** `work` inside BEGIN … COMMIT; any throw rolls back (if the connection still can) and is rethrown. */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}

// Where the store-away rule lives (the scheduler and the servers read it too); kept importable from here.
export { isStoreAway };

/**
 * Runs `statement` (one idempotent statement), trying again while the store is away (100 ms, doubling to
 * 2 s, between tries) for about `until` ms, or, given a function, until it says to stop: a failover or a
 * restart of a pooler takes a moment, and some callers cannot try again themselves (the A2A SDK answers
 * a task's load failure to the client). Gives up with the last error. A caller that stops itself tries
 * in the background: its waits keep no process alive.
 */
export async function retryWhileStoreAway<T>(statement: () => Promise<T>, until: number | (() => boolean) = 3000): Promise<T> {
  const deadline = typeof until === 'number' ? Date.now() + until : Infinity;
  const stopped = typeof until === 'function' ? until : () => false;
  for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
    try {
      return await statement();
    } catch (err) {
      const left = deadline - Date.now();
      if (!isStoreAway(err) || stopped() || left <= 0) throw err;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(wait, left));
        if (typeof until === 'function') timer.unref();
      });
    }
  }
}
