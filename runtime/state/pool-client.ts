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

const connectionLost = Symbol('connectionLost');
type TrackedClient = PoolClient & { [connectionLost]?: Error };

export function openPool(config: PoolConfig, log?: Logger): Pool {
  const pool = new pg.Pool(config);
  pool.on('connect', (client: TrackedClient) => {
    client.on('error', (err) => {
      client[connectionLost] ??= err;
    });
  });
  // An idle client that loses its connection is dropped by the pool, which then reports it here.
  pool.on('error', (err) => log?.warn(`state store: ${err.message}`));
  return pool;
}

export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client: TrackedClient = await pool.connect();
  try {
    return await work(client);
  } finally {
    client.release(client[connectionLost]);
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
