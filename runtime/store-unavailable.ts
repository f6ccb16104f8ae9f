/**
 * The one error every front end answers with while the state store is away
 * (Postgres restarting, a failover, a pooler's restart):
 * FORGE_STATE_UNAVAILABLE, a message that says so and a hint to retry. The
 * store raises it (runtime/state/pool-client.ts tells a store away from a
 * statement that failed, on the store's own connections); the registry and
 * the servers map this class only, never a driver's error code, which any
 * tool's own connection can give too. The raw driver error's one line stays
 * in the server log; a client can do nothing with it.
 *
 * Here, at the top of runtime/, not in state/: the scheduler, the tool
 * registry and the servers read it, and state/ imports the scheduler.
 */
import { ForgeError } from './diagnostics.ts';

export const STATE_UNAVAILABLE_MESSAGE = 'the state store cannot be reached right now';
const STATE_UNAVAILABLE_HINT = 'the agent is running, but its state store is not answering (a restart or failover); retry in a few seconds';

/**
 * The state store's connection failed or was refused for now. Its message names the driver's one line
 * (never its stack), for the log; what a client is told is STATE_UNAVAILABLE_MESSAGE.
 */
export class StateUnavailableError extends ForgeError {
  readonly reason: string;

  constructor(driverError: unknown) {
    const reason = driverError instanceof StateUnavailableError ? driverError.reason : driverError instanceof Error ? driverError.message : String(driverError);
    super('FORGE_STATE_UNAVAILABLE', `${STATE_UNAVAILABLE_MESSAGE} (${reason})`, STATE_UNAVAILABLE_HINT);
    this.reason = reason;
  }
}
