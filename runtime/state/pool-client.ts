/**
 * The state store's connection pool, and work on one client checked out of
 * it. A `pg` client whose connection drops emits 'error', and an 'error'
 * nobody hears ends the process. The pool listens only on its idle clients;
 * a client can lose its connection while it is checked out (Postgres
 * restarts, an admin ends the backend, a failover), or even before its
 * first holder could listen: the ReadyForQuery that completes a connect and
 * the FATAL that follows can arrive in one read. So every client gets a
 * listener at birth, and a lost client is destroyed on release, not pooled.
 *
 * A statement (pool.query, or work in withClient) that finds the store away
 * rejects with StateUnavailableError: what the registry and the servers
 * answer FORGE_STATE_UNAVAILABLE for. The store's own code tells the two
 * apart with isStoreAway, which knows that class too.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import type { Logger } from '../tools/model.ts';
import pg from './pg-client.ts';
import { StateUnavailableError } from '../store-unavailable.ts';
import { STORED_TEXT_CONFIG } from './postgres-text.ts';

/**
 * SQLSTATEs of a store that is away for now: a lost or refused connection (class 08), a server shutting
 * down or not yet accepting (57P01–57P03), out of connections (53300), and a failover's node that does
 * not take writes yet (25006).
 */
const STORE_AWAY_STATES = /^(08|57P0[123]|53300|25006)/;
const STORE_AWAY_ERRNOS = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];

/**
 * Whether `err`, from a statement on the store's connections, says the store is away for now (the
 * statement may be tried again, on another connection), not that the statement failed. Only for errors
 * of the store's own connections: an errno says nothing of the store when another connection gave it.
 */
export function isStoreAway(err: unknown): boolean {
  if (err instanceof StateUnavailableError) return true;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (STORE_AWAY_STATES.test(code) || STORE_AWAY_ERRNOS.includes(code))) return true;
  // pg's words for a connection that went or took too long to open, or a statement that took too long
  // to answer (its connection is then discarded), and pg-pool's for a connection it could not get in time.
  return typeof message === 'string' && /^Connection terminated|^Query read timeout|^timeout exceeded when trying to connect/.test(message);
}

/** `err` as StateUnavailableError when it says the store is away; otherwise unchanged. */
function unavailableIfAway(err: unknown): unknown {
  return err instanceof StateUnavailableError || !isStoreAway(err) ? err : new StateUnavailableError(err);
}

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
    // Strings Postgres cannot hold (NUL, half a surrogate pair) written escaped and read back as they were.
    ...STORED_TEXT_CONFIG,
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
  // The promise form only (the store's code uses no callbacks).
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((...args: unknown[]) =>
    query(...args).catch((err: unknown) => {
      throw unavailableIfAway(err);
    })) as Pool['query'];
  return pool;
}

export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: TrackedClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw unavailableIfAway(err);
  }
  // A client whose statement found the store away is not pooled again: its connection may be gone, still
  // busy with a statement that timed out, or on a node that takes no writes.
  let away: Error | undefined;
  try {
    return await work(client);
  } catch (err) {
    if (isStoreAway(err)) away = err as Error;
    throw unavailableIfAway(err);
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
