/**
 * A state store that is away for now (Postgres restarting, a failover, a
 * pooler's restart), told apart from a statement that failed, and the one
 * error every front end answers with while it lasts: FORGE_STATE_UNAVAILABLE,
 * a message that says so and a hint to retry. The raw driver error (and its
 * stack) stays in the server log; a client can do nothing with it.
 *
 * Here, at the top of runtime/, not in state/: the scheduler, the tool
 * registry and the servers classify errors too, and state/ imports the
 * scheduler.
 */
import { ForgeError } from './diagnostics.ts';

/**
 * SQLSTATEs of a store that is away for now: a lost or refused connection (class 08), a server shutting
 * down or not yet accepting (57P01–57P03), out of connections (53300), and a failover's node that does
 * not take writes yet (25006).
 */
const STORE_AWAY_STATES = /^(08|57P0[123]|53300|25006)/;
const STORE_AWAY_ERRNOS = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];

/** Whether `err` says the store is away for now (the statement may be tried again, on another connection), not that the statement failed. */
export function isStoreAway(err: unknown): boolean {
  if (err instanceof StateUnavailableError) return true;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (STORE_AWAY_STATES.test(code) || STORE_AWAY_ERRNOS.includes(code))) return true;
  // pg's words for a connection that went or took too long to open, or a statement that took too long
  // to answer (its connection is then discarded), and pg-pool's for a connection it could not get in time.
  return typeof message === 'string' && /^Connection terminated|^Query read timeout|^timeout exceeded when trying to connect/.test(message);
}

export const STATE_UNAVAILABLE_HINT = 'the agent is running, but its state store is not answering (a restart or failover); retry in a few seconds';

/** What a client is told while the store is away; `reason` is the driver's one line (never its stack), for the log. */
export class StateUnavailableError extends ForgeError {
  readonly reason: string;

  constructor(driverError: unknown) {
    super('FORGE_STATE_UNAVAILABLE', 'the state store cannot be reached right now', STATE_UNAVAILABLE_HINT);
    this.reason = driverError instanceof StateUnavailableError ? driverError.reason : driverError instanceof Error ? driverError.message : String(driverError);
  }
}

/** `err` as FORGE_STATE_UNAVAILABLE when it says the store is away; otherwise unchanged. */
export function asStateUnavailable(err: unknown): unknown {
  return err instanceof StateUnavailableError || !isStoreAway(err) ? err : new StateUnavailableError(err);
}
