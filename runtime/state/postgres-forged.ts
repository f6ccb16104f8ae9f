/**
 * Forged tools in Postgres, so every replica serves them: forge_tool adds
 * the record of a tool that passed build, test and judge (its name unique
 * across the fleet, max_tools checked in the same transaction), every
 * process hears of it (`forge_forged`) and registers it from the record.
 * A removal deletes the row and logs the removal under a new seq from the
 * same sequence, so every process hears of that too and drops the tool.
 * Adds and removals take one lock, so seqs commit in order and a process
 * that reads past a seq misses nothing.
 * The retention's sweep removes the session-tier tools of the conversations
 * it deletes the same way (removeSessionTools), in the transaction that
 * deletes them; so does an MCP session that ends (removeSessionToolsNow).
 * Also forge_tool's calls, counted here so calls_per_minute holds for a
 * session whichever replica it reaches.
 */
import type { Pool, PoolClient } from 'pg';
import type { ForgedRecord } from '../tools/emergent/forged-store.ts';
import type { PostgresNotifications } from './postgres-notifications.ts';
import { inTransaction } from './pool-client.ts';
import { storedJson } from './postgres-text.ts';
import type { ForgedChange, ForgedRecords } from './store.ts';

/** pg_advisory_xact_lock key serializing add's name and count checks, and every removal's seq. */
const FORGED_LOCK = 0x666f726765_03;

/**
 * Deletes the tools `which` picks ($1) and logs each removal under a seq of its own, announced to every replica;
 * run under FORGED_LOCK, so seqs commit in order. One statement for remove's one name and a session's tools.
 */
const removing = (which: string) => `WITH gone AS (
    DELETE FROM forge_forged_tools WHERE ${which} RETURNING name, record->>'forgedAt' AS forged_at
  ), logged AS (
    INSERT INTO forge_forged_removals (seq, name, forged_at)
    SELECT nextval(pg_get_serial_sequence('forge_forged_tools', 'seq')), name, COALESCE(forged_at, '') FROM gone RETURNING name
  )
  SELECT pg_notify('forge_forged', name) FROM logged`;
const REMOVE_BY_NAME = removing('name = $1');
const REMOVE_SESSION_TOOLS = removing('owner = ANY($1::text[])');

/** Inside `client`'s transaction: runs one of the removals above under the lock; returns how many went. */
async function removeUnderLock(client: PoolClient, statement: string, param: unknown): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [FORGED_LOCK]);
  const { rowCount } = await client.query(statement, [param]);
  return rowCount ?? 0;
}

// $1 the seq read up to. Below the newest removal pruned, a removal after it may be gone: every tool is read
// anew (from seq 0), after a `pruned` row.
const SINCE = `WITH p AS (SELECT $1::bigint > 0 AND $1::bigint < COALESCE(max(through), 0) AS pruned FROM forge_forged_pruned),
  f AS (SELECT CASE WHEN pruned THEN 0 ELSE $1::bigint END AS after, pruned FROM p)
  SELECT seq, record, NULL AS name, NULL AS forged_at, false AS pruned FROM forge_forged_tools, f WHERE seq > f.after
  UNION ALL SELECT seq, NULL, name, forged_at, false FROM forge_forged_removals, f WHERE seq > f.after
  UNION ALL SELECT 0, NULL, NULL, NULL, true FROM f WHERE f.pruned
  ORDER BY seq, pruned DESC`;

/**
 * Inside `client`'s transaction: removes the session-tier tools these sessions forged (only a session tool
 * has an owner) for every replica, as remove does one; returns how many. Every replica hears of it once the
 * transaction commits.
 */
export async function removeSessionTools(client: PoolClient, owners: string[]): Promise<number> {
  return owners.length ? removeUnderLock(client, REMOVE_SESSION_TOOLS, owners) : 0;
}

/**
 * Removes the session-tier tools these sessions forged, in a transaction of its own (an MCP session that
 * ended); most sessions forged none, and are answered without the lock every forge takes.
 */
export async function removeSessionToolsNow(pool: Pool, owners: string[]): Promise<number> {
  if (!owners.length) return 0;
  const { rowCount } = await pool.query('SELECT 1 FROM forge_forged_tools WHERE owner = ANY($1::text[]) LIMIT 1', [owners]);
  if (!rowCount) return 0;
  return inTransaction(pool, (client) => removeSessionTools(client, owners));
}

export class PostgresForged implements ForgedRecords {
  constructor(
    private readonly pool: Pool,
    private readonly notifications: PostgresNotifications,
  ) {}

  add(record: ForgedRecord, maxTools: number): ReturnType<ForgedRecords['add']> {
    const { name } = record.request;
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [FORGED_LOCK]);
      const { rows } = await client.query<{ taken: boolean; total: string; mine: string }>(
        'SELECT bool_or(name = $1) AS taken, count(*) AS total, count(*) FILTER (WHERE owner = $2) AS mine FROM forge_forged_tools',
        [name, record.owner ?? null],
      );
      if (rows[0].taken) return { code: 'FORGE_TOOL_COLLISION', message: `tool "${name}" was forged on another replica meanwhile` };
      if (Number(rows[0].total) >= maxTools) return { code: 'FORGE_FORGE_QUOTA', message: `the agent has ${rows[0].total} forged tools; the limit is ${maxTools} (emergent.max_tools)` };
      if (record.owner && Number(rows[0].mine) >= maxTools) return { code: 'FORGE_FORGE_QUOTA', message: `this session has forged ${rows[0].mine} tools; the limit is ${maxTools} (emergent.max_tools)` };
      await client.query('INSERT INTO forge_forged_tools (name, owner, record) VALUES ($1, $2, $3::json)', [name, record.owner ?? null, storedJson(record)]);
      // Sent when the transaction commits: a replica that hears it finds the row.
      await client.query("SELECT pg_notify('forge_forged', $1)", [name]);
      return undefined;
    });
  }

  async since(seq: number): Promise<ForgedChange[]> {
    // One statement, so adds, removals and what was pruned come from one snapshot.
    const { rows } = await this.pool.query<{ seq: string; record: ForgedRecord | null; name: string | null; forged_at: string | null; pruned: boolean }>(SINCE, [seq]);
    return rows.map((r) => (r.pruned ? { seq: 0, pruned: true } : r.record ? { seq: Number(r.seq), record: r.record } : { seq: Number(r.seq), removed: { name: r.name!, forgedAt: r.forged_at! } }));
  }

  remove(name: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => (await removeUnderLock(client, REMOVE_BY_NAME, name)) > 0);
  }

  subscribe(listener: () => void): () => void {
    const offForged = this.notifications.on('forge_forged', () => listener());
    // What was forged while the LISTEN connection was down was announced to no one: look again once it is back.
    const offReconnect = this.notifications.onReconnect(listener);
    return () => {
      offForged();
      offReconnect();
    };
  }

  takeCall(session: string, perMinute: number): Promise<string | undefined> {
    return inTransaction(this.pool, async (client) => {
      // One session's calls take turns (two replicas cannot both take its last place in the minute).
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`forge_forge_calls:${session}`]);
      await client.query("DELETE FROM forge_forge_calls WHERE session = $1 AND at < clock_timestamp() - interval '1 minute'", [session]);
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM forge_forge_calls WHERE session = $1', [session]);
      const recent = Number(rows[0].n);
      if (recent >= perMinute) return `forge_tool was called ${recent} times in the last minute; the limit is ${perMinute} per minute`;
      await client.query('INSERT INTO forge_forge_calls (session) VALUES ($1)', [session]);
      return undefined;
    });
  }
}
