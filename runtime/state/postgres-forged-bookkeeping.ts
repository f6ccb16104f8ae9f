/**
 * forge_tool's bookkeeping in Postgres, pruned by the hourly sweep of every
 * serving replica whatever the retention (it is not user data, and grows with
 * every forge): the call counts calls_per_minute no longer looks at, and the
 * removals of forged tools no running replica still needs. The newest seq
 * pruned is noted, so a replica behind it reads every tool anew
 * (postgres-forged.ts's since) instead of missing a removal.
 */
import type { Pool } from 'pg';

/**
 * How long a removal is kept for the replicas that follow the seq. A replica reads the removals after its
 * seq on every notification, on its LISTEN connection's return and every 30 s while its looks fail, so a
 * running one is this far behind only after a day without the store; one that is finds the removals after
 * its seq pruned and reads every tool anew (postgres-forged.ts's since). A replica that starts reads every tool anyway.
 */
export const FORGED_REMOVALS_KEPT_MS = 24 * 60 * 60 * 1000;

// $1 how long removals are kept, in ms; $2 the batch. The newest seq deleted is noted in the same statement, so
// no snapshot sees the rows gone without it. (A removal older than a day committed long ago: no
// seq below it can still commit.)
const PRUNE_REMOVALS = `WITH gone AS (
    DELETE FROM forge_forged_removals WHERE seq IN (
      SELECT seq FROM forge_forged_removals WHERE removed_at < now() - $1 * interval '1 millisecond' LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING seq
  )
  UPDATE forge_forged_pruned SET through = GREATEST(through, (SELECT max(seq) FROM gone))
  WHERE EXISTS (SELECT 1 FROM gone)
  RETURNING (SELECT count(*) FROM gone) AS deleted`;

// $1 the batch. takeCall counts a session's calls of the last minute (by clock_timestamp(), as here): an older one
// is never counted again, and a session that stopped calling left its last minute's rows for good.
const PRUNE_CALLS = `DELETE FROM forge_forge_calls WHERE ctid IN (
  SELECT ctid FROM forge_forge_calls WHERE at < clock_timestamp() - interval '1 minute' LIMIT $1 FOR UPDATE SKIP LOCKED)`;

/**
 * forge_tool's bookkeeping, which grows with every forge and removal whatever the retention: the call counts
 * calls_per_minute no longer looks at, and the removals no replica still needs (FORGED_REMOVALS_KEPT_MS). In
 * batches, each its own statement, that pass over rows another session holds. Returns how many of each went.
 */
export async function pruneForgedBookkeeping(pool: Pool, batch: number, removalsKeptMs = FORGED_REMOVALS_KEPT_MS): Promise<{ calls: number; removals: number }> {
  let calls = 0;
  for (;;) {
    const { rowCount } = await pool.query(PRUNE_CALLS, [batch]);
    calls += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) break;
  }
  let removals = 0;
  for (;;) {
    const { rows } = await pool.query<{ deleted: string }>(PRUNE_REMOVALS, [removalsKeptMs, batch]);
    const deleted = Number(rows[0]?.deleted ?? 0);
    removals += deleted;
    if (deleted < batch) break;
  }
  return { calls, removals };
}
