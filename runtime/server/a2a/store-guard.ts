/**
 * A2A while the state store is away: every A2A method reads or writes tasks
 * there, and the A2A SDK answered a store failure with JSON-RPC -32603 and
 * the driver's words ("connect ECONNREFUSED …"), after printing the error's
 * stack with console.error, unprefixed, in any log format.
 *
 * - A message (a new turn) is refused before it reaches the SDK when the
 *   store does not answer a ping: a turn could neither take its task's lease
 *   nor read its conversation. Messages that come while a ping is under way
 *   wait for that one.
 * - Any other failure of the store inside an SDK method is answered the same
 *   way: the handler's methods are wrapped, and the failure is noted against
 *   the request's call context, which the transport's own mapping loses.
 * - A turn that loses the store once under way (its conversation or lease
 *   cannot be written) does not throw into the SDK: the executor ends its
 *   task failed, which the SDK answers as a result (message/send's task, or
 *   message/stream's last event). The executor notes the failure against the
 *   request's call context too (RequestContext.context), and the answer, or
 *   the stream's last event, is Forge's error instead.
 *
 * Each answers FORGE_STATE_UNAVAILABLE with a hint to retry, and logs one line.
 */
import type { Logger } from '../../tools/model.ts';
import { STATE_UNAVAILABLE_MESSAGE, StateUnavailableError } from '../../store-unavailable.ts';
import { pingWithin } from '../store-readiness.ts';

/** A JSON-RPC error object in the shape Forge's other refusals on /a2a and /mcp have (respond.ts). */
export interface ForgeRpcError {
  code: number;
  message: string;
  data: { code: string; hint?: string };
}

/** JSON-RPC's range for server errors, as the other refusals on /a2a answer. */
const SERVER_ERROR = -32000;

/** The A2A methods that send a message (a new turn), in both protocol versions. */
export const SEND_METHODS: ReadonlySet<string> = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

/** The request handler's methods that reach the task store, and take the call context last. */
const ASYNC_METHODS = ['sendMessage', 'getTask', 'listTasks', 'cancelTask'] as const;
const STREAM_METHODS = ['sendMessageStream', 'resubscribe'] as const;

function stateUnavailableRpcError(err: StateUnavailableError): ForgeRpcError {
  return { code: SERVER_ERROR, message: STATE_UNAVAILABLE_MESSAGE, data: { code: err.code, ...(err.hint ? { hint: err.hint } : {}) } };
}

export class A2AStoreGuard {
  /** Store failures seen inside the SDK, by the request's call context. */
  private readonly failures = new WeakMap<object, StateUnavailableError>();
  /** The ping under way, which messages that come meanwhile share. */
  private pinging: Promise<void> | undefined;

  constructor(
    private readonly ping: (() => Promise<void>) | undefined,
    private readonly log: Logger,
  ) {}

  /** Refuses a message while the store does not answer; undefined: go on. */
  async refuseSend(method: string): Promise<ForgeRpcError | undefined> {
    if (!this.ping || !SEND_METHODS.has(method)) return undefined;
    try {
      await (this.pinging ??= pingWithin(this.ping).finally(() => (this.pinging = undefined)));
      return undefined;
    } catch (err) {
      return this.refusal(method, new StateUnavailableError(err));
    }
  }

  /** Wraps the handler's methods so that a store failure inside them is noted for the request. */
  guard<T extends object>(handler: T): T {
    const target = handler as Record<string, unknown>;
    for (const name of ASYNC_METHODS) {
      const method = target[name];
      if (typeof method !== 'function') continue;
      target[name] = async (...args: unknown[]) => {
        try {
          return await method.apply(handler, args);
        } catch (err) {
          throw this.note(args.at(-1), err);
        }
      };
    }
    for (const name of STREAM_METHODS) {
      const method = target[name];
      if (typeof method !== 'function') continue;
      const guard = this;
      target[name] = async function* (...args: unknown[]) {
        try {
          yield* method.apply(handler, args) as AsyncGenerator<unknown>;
        } catch (err) {
          throw guard.note(args.at(-1), err);
        }
      };
    }
    return handler;
  }

  /** The answer for a request whose SDK call failed because the store was away (undefined: it did not). */
  answerFor(method: unknown, context: object): ForgeRpcError | undefined {
    const failure = this.failures.get(context);
    if (!failure) return undefined;
    this.failures.delete(context);
    return this.refusal(String(method), failure);
  }

  /** Notes `err` against a request's call context when it is the store away; returns `err`, to be thrown on. */
  note(context: unknown, err: unknown): unknown {
    // The store raises this class for a store away (runtime/state/pool-client.ts); any other error is the SDK's to answer.
    if (err instanceof StateUnavailableError && context && typeof context === 'object') this.failures.set(context, err);
    return err;
  }

  private refusal(method: string, err: StateUnavailableError): ForgeRpcError {
    this.log.warn(`a2a: ${method} answered ${err.code}: the state store cannot be reached (${err.reason})`);
    return stateUnavailableRpcError(err);
  }
}
