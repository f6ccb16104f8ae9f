/**
 * Conversations in Postgres. A turn holds the row (turn_owner + an expiry
 * it renews while it runs): one turn at a time per conversation across
 * replicas, and a replica that dies mid-turn lets go when the hold expires.
 * The save is a compare-and-swap on the version read and releases the hold
 * in the same statement, announcing it so waiting replicas try at once.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { PostgresNotifications } from './postgres-notifications.ts';
import { StateConflictError, type ConversationStore, type Session } from './store.ts';
import { KeyedQueue } from './keyed-queue.ts';
import { retryWhileStoreAway } from './pool-client.ts';
import { storedJson, toStoredText } from './postgres-text.ts';

const ACQUIRE = `
  INSERT INTO forge_conversations (id, version, data, turn_owner, turn_expires)
  VALUES ($1, 0, $3::jsonb, $2, now() + $4 * interval '1 millisecond')
  ON CONFLICT (id) DO UPDATE SET turn_owner = EXCLUDED.turn_owner, turn_expires = EXCLUDED.turn_expires
  WHERE forge_conversations.turn_owner IS NULL OR forge_conversations.turn_expires < now()
  RETURNING version, data`;
const RENEW = `UPDATE forge_conversations SET turn_expires = now() + $3 * interval '1 millisecond' WHERE id = $1 AND turn_owner = $2`;
const SAVE = `
  WITH saved AS (
    UPDATE forge_conversations SET data = $3::jsonb, version = version + 1, turn_owner = NULL, turn_expires = NULL, updated_at = now()
    WHERE id = $1 AND turn_owner = $2 AND version = $4 RETURNING id)
  SELECT pg_notify('forge_turn', md5(id)) FROM saved`;
const RELEASE = `
  WITH freed AS (UPDATE forge_conversations SET turn_owner = NULL, turn_expires = NULL WHERE id = $1 AND turn_owner = $2 RETURNING id)
  SELECT pg_notify('forge_turn', md5(id)) FROM freed`;

/**
 * Whether the save of turn $5 over version $2 landed: the conversation is past that version and its
 * latest saves name the turn. Its messages beginning with the turn's ($3, $4 of them) is not enough:
 * a turn that took the conversation over after it may have dropped its earliest messages (a
 * conversation at its limit, Agent's keepLatest, drops some at every turn). They are still asked for
 * when the saves were not kept (a turn saved by an older Forge since).
 */
const SAVED = `
  SELECT 1 FROM forge_conversations c WHERE id = $1 AND version > $2 AND (coalesce(c.data->'saves', '[]'::jsonb) @> jsonb_build_array($5::text) OR $3::jsonb = (
    SELECT coalesce(jsonb_agg(m ORDER BY n), '[]'::jsonb) FROM jsonb_array_elements(c.data->'messages') WITH ORDINALITY AS e(m, n) WHERE n <= $4))`;
/** How many of a conversation's latest saves it names (SAVED): far more than can land in the time a save is retried. */
const SAVES_KEPT = 16;
/** How often a waiting turn tries again without a notification. */
const POLL_MS = 250;

export class PostgresConversations implements ConversationStore {
  private readonly queues = new KeyedQueue();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly pool: Pool,
    notifications: PostgresNotifications,
    private readonly replicaId: string,
    private readonly holdMs: number,
  ) {
    notifications.on('forge_turn', (hash) => {
      for (const wake of this.waiters.get(hash) ?? []) wake();
    });
  }

  async read(id: string): Promise<Session> {
    const { rows } = await this.pool.query<{ data: StoredData }>('SELECT data FROM forge_conversations WHERE id = $1', [id]);
    return toSession(id, rows[0]?.data);
  }

  /** Turns queue in this process first, so only one per conversation waits on the database. */
  withTurn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T> {
    return this.queues.run(id, () => this.turn(id, work));
  }

  private async turn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T> {
    const owner = `${this.replicaId}:${randomUUID()}`;
    const { version, data } = await this.acquire(id, owner);
    const renew = setInterval(() => void this.pool.query(RENEW, [id, owner, this.holdMs]).catch(() => {}), Math.max(100, this.holdMs / 3));
    renew.unref();
    const session = toSession(id, data);
    const saves = [...(Array.isArray(data?.saves) ? data.saves.filter((s) => typeof s === 'string') : []), owner].slice(-SAVES_KEPT);
    let saved = false;
    try {
      const result = await work(session);
      saved = true;
      await this.save(session, owner, version, saves);
      return result;
    } catch (err) {
      // What the turn did before failing stays (as it would in memory), unless the save itself failed.
      if (!saved) await this.save(session, owner, version, saves).catch(() => this.pool.query(RELEASE, [id, owner]).catch(() => {}));
      throw err;
    } finally {
      clearInterval(renew);
    }
  }

  private async acquire(id: string, owner: string): Promise<{ version: number; data: StoredData }> {
    const hash = createHash('md5').update(toStoredText(id)).digest('hex');
    for (;;) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      let set = this.waiters.get(hash);
      if (!set) this.waiters.set(hash, (set = new Set()));
      set.add(wake);
      try {
        const { rows } = await this.pool.query<{ version: string; data: StoredData }>(ACQUIRE, [id, owner, storedJson({ messages: [] }), this.holdMs]);
        if (rows.length) return { version: Number(rows[0].version), data: rows[0].data };
        await Promise.race([woken, new Promise((resolve) => setTimeout(resolve, POLL_MS))]);
      } finally {
        set.delete(wake);
        if (!set.size) this.waiters.delete(hash);
      }
    }
  }

  /**
   * Tried again on a lost connection for up to a hold (renewed meanwhile): a turn that ends while the
   * store is away keeps what it did when the store is back, unless another turn took over.
   */
  private async save(session: Session, owner: string, version: number, saves: string[]): Promise<void> {
    const data = storedJson({ messages: session.messages, ...(session.pending ? { pending: session.pending } : {}), saves } satisfies StoredData);
    let tries = 0;
    const { rowCount } = await retryWhileStoreAway(() => (tries++, this.pool.query(SAVE, [session.id, owner, data, version])), this.holdMs);
    if (rowCount) return;
    // A try before a lost connection may have been saved without the answer reaching this process.
    if (tries > 1 && (await this.pool.query(SAVED, [session.id, version, storedJson(session.messages), session.messages.length, owner])).rowCount) return;
    throw new StateConflictError(`conversation "${session.id}" was taken over while this turn ran (its hold expired); the turn's changes were not saved`);
  }
}

/** `saves`: the turns that saved it last, latest last (SAVED). */
type StoredData = Pick<Session, 'messages' | 'pending'> & { saves?: string[] };

function toSession(id: string, data: StoredData | undefined): Session {
  return { id, messages: data?.messages ?? [], ...(data?.pending ? { pending: data.pending } : {}) };
}
