/**
 * How many A2A turns this process runs or queues at once. A message sent
 * with `blocking: false` (v0.3) or `returnImmediately` (v1.0) is answered as
 * soon as its task exists and its turn runs on, and so does the turn of a
 * client that hangs up mid-stream: without a cap, one client with the token
 * starts turns (model calls paid for, memory, a place in a conversation's
 * queue) without holding a connection for any of them. A turn counts from its
 * request until it ends, waiting for its conversation included.
 *
 * A request takes a reservation before the SDK sees it (keyed by its call
 * context, which reaches the executor as RequestContext.context); the
 * executor turns it into a running turn when it starts one; a request that
 * ends without a turn (malformed, task not found) gives its reservation back.
 * Counting reservations closes the window in which many requests could all
 * see room before any of their turns started.
 */
import { wholeNumberSetting } from '../../exec/process-slots.ts';
import type { ForgeRpcError } from './store-guard.ts';

/** Turns are mostly waiting on the model; this many at once is far past one agent's real load, yet bounded. */
export const DEFAULT_MAX_TURNS = 256;

/** FORGE_MAX_TURNS, at least 1; else the default. */
export function maxTurnsSetting(env: NodeJS.ProcessEnv): number {
  return wholeNumberSetting(env.FORGE_MAX_TURNS, 1) ?? DEFAULT_MAX_TURNS;
}

export class TurnLimit {
  private readonly reserved = new Set<object>();
  private running = 0;

  constructor(readonly max: number) {}

  /** Holds room for the turn a request may start; false: there is none. */
  reserve(context: object): boolean {
    if (this.reserved.size + this.running >= this.max) return false;
    this.reserved.add(context);
    return true;
  }

  /** A turn starts (its request's reservation becomes it; a turn run without a request has none). */
  started(context: object | undefined): void {
    if (context) this.reserved.delete(context);
    this.running++;
  }

  ended(): void {
    this.running--;
  }

  /** The request is over: a reservation no turn took is given back. */
  release(context: object): void {
    this.reserved.delete(context);
  }

  refusal(): ForgeRpcError {
    return {
      code: -32000,
      message: `the agent is busy: ${this.max} turns already run or wait in this process`,
      data: { code: 'FORGE_AGENT_BUSY', hint: 'try again shortly; FORGE_MAX_TURNS raises how many turns one process runs at once' },
    };
  }
}
