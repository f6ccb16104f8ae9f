/**
 * A2A push notifications: a client registers a webhook for a task
 * (tasks/pushNotificationConfig/set, CreateTaskPushNotificationConfig, or
 * message/send's `configuration.pushNotificationConfig`), and the agent
 * POSTs the task's updates there — a task paused for approval, a slow tool,
 * then its end — while the client is gone.
 *
 * The SDK's request handler does the protocol; webhook-checks.ts decides
 * where a webhook may point, and this file how notifications go: through
 * the agent's HttpClient (the policy sees every resolved address;
 * redirects are not followed), each checked again as it connects, on the
 * address it connects to (a name may resolve elsewhere since the config was
 * set; a kept-alive connection, shared only by notifications, goes on to
 * the address it was checked for); per task in order, never in the task's
 * way (the SDK does not wait for them). A failure is tried again a bounded
 * number of times (network errors, 408, 429, 5xx), then logged with the
 * task and the webhook (never its token, nor its query string) and
 * dropped. A task does not read as going backwards: once its final state
 * is queued, its earlier states still waiting are dropped (its artifacts
 * are not, but at a v0.3 webhook, where each is the whole task and the
 * final one carries them all), and a notification saying the task has not
 * ended is not sent, nor tried again, once the store holds it finished
 * (another replica may have sent its end).
 *
 * The config's token goes in X-A2A-Notification-Token, or its
 * `authentication` (scheme and credentials) in Authorization, as the SDK's
 * own sender does. The body follows the protocol version the config was set
 * over: v1.0's StreamResponse JSON, or v0.3's task object.
 */
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationSender, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { delay } from '../../duration.ts';
import { EgressRefusedError } from '../../net/egress-policy.ts';
import { HttpError, type HttpClient } from '../../net/http-client.ts';
import { redact } from '../../state/shown-url.ts';
import { FINAL_STATE_TRIES, type FinalDeliveries, type PushConfigRecords } from '../../state/store.ts';
import type { Logger } from '../../tools/model.ts';
import { V03PushNotificationSerializer, V1PushNotificationSerializer } from '../../vendor/a2a.ts';
import { plainHttpProblem } from './webhook-checks.ts';

/**
 * How many of a task's updates wait behind the one being sent. A webhook
 * that is slow or down (each notification up to 3 tries of 10 s) would
 * otherwise hold a copy of the task for every update (a long answer is
 * streamed in hundreds of chunks) for as long as it takes: past this, the
 * oldest waiting state a later one supersedes is dropped, else the oldest
 * waiting; the latest, which says how the task stands, is always sent.
 */
export const MAX_WAITING_NOTIFICATIONS = 32;

export interface PushDelivery {
  /** Tries per notification, the first included (default 3). */
  attempts?: number;
  /** The wait before the first retry, doubled for each next one (default 1 s). */
  retryDelayMs?: number;
  /** One try's deadline (default 10 s). */
  timeoutMs?: number;
  /** How long a task's configs, once loaded, are used again before the store is asked again (default 1 s). */
  cacheMs?: number;
  /** How many of a task's updates may wait behind the one being sent (default MAX_WAITING_NOTIFICATIONS). */
  maxWaiting?: number;
  /** How long after a task finished its final state counts as not sent where the store does not say it was (default 60 s: past the tries above). */
  finalGraceMs?: number;
  /** How often the store is asked for final states not sent, and the first wait before one is tried again, doubled each time (default 30 s). */
  finalRetryMs?: number;
}

export { FINAL_STATE_TRIES };
/** Final states tried again per look at the store. */
const FINAL_STATES_PER_LOOK = 20;
/** A2A's TaskState values that end a task: completed, failed, canceled, rejected. */
const FINAL_STATES: ReadonlySet<number> = new Set([3, 4, 5, 7]);

/**
 * What an update says of its task's state: that it ended (a final state), that it has not (a status update,
 * or the task, in any other state), or nothing (an artifact, a message).
 */
type Says = 'final' | 'unfinished' | undefined;

/** An update waiting its turn; `snapshot` is cleared when it is dropped (the chain no longer holds the task). */
interface Waiting {
  snapshot?: { streamResponse: StreamResponse; task?: Task };
  says: Says;
}

type Failure = { message: string; retry: boolean };

/** Sends each task update to the task's webhooks through the agent's HttpClient. */
export class PolicyPushSender implements PushNotificationSender {
  /** Each task's notifications, one after another (a later update never overtakes an earlier one). */
  private readonly chains = new Map<string, Promise<void>>();
  /** Each task's updates not yet under way, oldest first, and how many were dropped since it last had none. */
  private readonly waiting = new Map<string, { items: Waiting[]; dropped: number }>();
  private readonly loaded = new Map<string, { at: number; configs: Promise<StoredPushNotificationConfig[]> }>();
  private readonly serializers = { '1.0': new V1PushNotificationSerializer(), '0.3': new V03PushNotificationSerializer() };
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private readonly maxWaiting: number;
  readonly finalGraceMs: number;
  readonly finalRetryMs: number;

  constructor(
    private readonly store: PushConfigRecords,
    private readonly http: HttpClient,
    private readonly log: Logger,
    delivery: PushDelivery = {},
  ) {
    this.attempts = Math.max(1, delivery.attempts ?? 3);
    this.retryDelayMs = delivery.retryDelayMs ?? 1000;
    this.timeoutMs = delivery.timeoutMs ?? 10_000;
    this.cacheMs = delivery.cacheMs ?? 1000;
    this.maxWaiting = Math.max(1, delivery.maxWaiting ?? MAX_WAITING_NOTIFICATIONS);
    this.finalGraceMs = delivery.finalGraceMs ?? 60_000;
    this.finalRetryMs = delivery.finalRetryMs ?? 30_000;
  }

  /** A config of the task was set or deleted here: the next update asks the store. */
  forget(taskId: string): void {
    this.loaded.delete(taskId);
  }

  /** Never rejects: a notification is the client's, not the task's. */
  send(streamResponse: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId) return Promise.resolve();
    // The task as it is now: the SDK may hand over the one it goes on updating.
    let snapshot: { streamResponse: StreamResponse; task?: Task };
    try {
      snapshot = structuredClone({ streamResponse, task });
    } catch (err) {
      this.log.warn(`push notification for task ${taskId} not sent: ${(err as Error).message}`);
      return Promise.resolve();
    }
    const item: Waiting = { snapshot, says: whatItSays(streamResponse) };
    const queue = this.waiting.get(taskId) ?? { items: [], dropped: 0 };
    this.waiting.set(taskId, queue);
    // The task's states before its end, still waiting, would only hold its final state back: past the grace another
    // replica sends that, and they would come after it, reading as the task going backwards. Its artifacts stay, in
    // order before it (v1.0's final state does not carry them).
    if (item.says === 'final') dropUnfinished(queue.items);
    queue.items.push(item);
    if (queue.items.length > this.maxWaiting) {
      const [dropped] = queue.items.splice(indexToDrop(queue.items), 1);
      dropped.snapshot = undefined;
      if (queue.dropped++ === 0) this.log.warn(`push notifications for task ${taskId} fall behind its updates (its webhooks are slow or failing): past ${this.maxWaiting} waiting, states a later one supersedes are dropped first, else the oldest`);
    }
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous
      .then(() => {
        const taken = item.snapshot;
        if (!taken) return;
        item.snapshot = undefined;
        queue.items.splice(queue.items.indexOf(item), 1);
        if (queue.items.length === 0 && this.waiting.get(taskId) === queue) this.waiting.delete(taskId);
        return this.notify(taskId, context, taken.streamResponse, taken.task, item.says);
      })
      .catch((err: Error) => this.log.warn(`push notification for task ${taskId} not sent: ${err.message}`));
    this.chains.set(taskId, next);
    void next.then(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
    return next;
  }

  /** Waits for the notifications under way (a stop lets them finish, up to its grace period). */
  async settled(): Promise<void> {
    while (this.chains.size) await Promise.all([...this.chains.values()]);
  }

  private async notify(taskId: string, context: ServerCallContext, streamResponse: StreamResponse, task: Task | undefined, says: Says): Promise<void> {
    let configs: StoredPushNotificationConfig[];
    try {
      configs = await this.configsOf(taskId, context);
    } catch (err) {
      this.log.warn(`push notification for task ${taskId} not sent: cannot read its webhooks: ${(err as Error).message}`);
      return;
    }
    if (!configs.length) return;
    // An update that reads, at a webhook, as the task not having ended is looked at before each try, so that none
    // starts after the final state may have gone (see outdated); the first look is one for all the webhooks.
    const current = async () => !(await this.outdated(taskId));
    let firstLook: Promise<boolean> | undefined;
    // The store keeps which webhooks took a task's final state: the others are tried again from there (retryFinals).
    const final = says === 'final' ? this.store.finals : undefined;
    // One body per protocol version, however many of the task's webhooks take it.
    const bodies = new Map<'0.3' | '1.0', { body: string; contentType: string }>();
    await Promise.all(
      configs.map(async ({ config, wireVersion }) => {
        const version = wireVersion === '0.3' ? '0.3' : '1.0';
        const unfinished = says === 'unfinished' || (version === '0.3' && readsAsUnfinishedTask(streamResponse, task));
        if (unfinished && !(await (firstLook ??= current()))) {
          this.log.debug(`push notification for task ${taskId} to ${redact(config.url)} left out: the task has ended since`);
          return;
        }
        let serialized = bodies.get(version);
        if (!serialized) bodies.set(version, (serialized = this.serializers[version].serialize(streamResponse, task)));
        const failure = await this.deliver(taskId, config, serialized.body, serialized.contentType, unfinished ? current : undefined);
        if (final && (!failure || !failure.retry)) await this.settle(final, taskId, config);
      }),
    );
  }

  /**
   * Sends again the final state of finished tasks whose webhooks did not take it (the store's finals): the
   * replica that ran the task stopped first, or the webhook was down for every try. Each is claimed in the
   * store, so one replica sends it; one try per claim, the next due later and later, up to FINAL_STATE_TRIES.
   */
  async retryFinals(): Promise<void> {
    const finals = this.store.finals;
    if (!finals) return;
    // A claim outlasts its try (its deadline, twice over): no other replica takes it while it is under way.
    const due = await finals.claimUnsettled(FINAL_STATES_PER_LOOK, this.finalGraceMs, Math.max(this.finalRetryMs, 2 * this.timeoutMs), FINAL_STATE_TRIES);
    await Promise.all(
      due.map(async ({ taskId, config, wireVersion, task, tries }) => {
        const { body, contentType } = this.serializers[wireVersion === '0.3' ? '0.3' : '1.0'].serialize({ payload: { $case: 'task', value: task } } as StreamResponse, task);
        const failure = await this.attempt(config, body, contentType);
        const where = `push notification of task ${taskId}'s final state to ${redact(config.url)}`;
        if (!failure) {
          this.log.info(`${where} sent, on try ${tries} from the store (the earlier ones failed, or the replica that ran the task stopped first)`);
        } else if (failure.retry && tries < FINAL_STATE_TRIES) {
          this.log.warn(`${where} failed again (try ${tries} from the store of ${FINAL_STATE_TRIES}): ${failure.message}; tried again later`);
          return;
        } else {
          this.log.warn(`${where} given up${failure.retry ? ` after ${tries} tries from the store` : ''}: ${failure.message}`);
        }
        await this.settle(finals, taskId, config);
      }),
    );
  }

  /** Marks the config as done with its task's final state; a store that cannot say so now leaves it to be sent again (at least once). */
  private async settle(finals: FinalDeliveries, taskId: string, config: TaskPushNotificationConfig): Promise<void> {
    if (!config.id) return;
    try {
      await finals.settle(taskId, config.id);
    } catch (err) {
      this.log.warn(`push notification of task ${taskId}'s final state to ${redact(config.url)}: cannot note it in the store (${(err as Error).message}); it may be sent again`);
    }
  }

  private configsOf(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const cached = this.loaded.get(taskId);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.configs;
    const configs = this.store.loadWithMetadata(taskId, context);
    this.loaded.set(taskId, { at: Date.now(), configs });
    configs.catch(() => this.loaded.get(taskId)?.configs === configs && this.loaded.delete(taskId));
    // Entries of tasks gone quiet are dropped as others are added.
    for (const [id, entry] of this.loaded) if (Date.now() - entry.at >= this.cacheMs) this.loaded.delete(id);
    return configs;
  }

  /**
   * Whether an update saying the task has not ended is out of date: its final state waits here, or the store
   * holds the task finished (another replica ran it to its end, or may have sent its final state from the store
   * once the grace passed). Sent then, it would reach the webhook after the final state. A store that cannot
   * say leaves it to be sent: an update is the client's, and at worst comes late.
   */
  private async outdated(taskId: string): Promise<boolean> {
    if (this.waiting.get(taskId)?.items.some((item) => item.says === 'final')) return true;
    try {
      return (await this.store.finals?.finished(taskId)) === true;
    } catch {
      return false;
    }
  }

  /**
   * Sends one notification, tried again as `attempts` says while `current` (if given) says it still is; the last
   * failure, or undefined when the webhook took it (or it went out of date).
   */
  private async deliver(taskId: string, config: TaskPushNotificationConfig, body: string, contentType: string, current?: () => Promise<boolean>): Promise<Failure | undefined> {
    for (let attempt = 1; ; attempt++) {
      const failure = await this.attempt(config, body, contentType);
      if (!failure) return undefined;
      if (!failure.retry || attempt >= this.attempts) {
        this.log.warn(`push notification for task ${taskId} to ${redact(config.url)} failed${attempt > 1 ? ` after ${attempt} tries` : ''}: ${failure.message}`);
        return failure;
      }
      await delay(this.retryDelayMs * 2 ** (attempt - 1));
      if (current && !(await current())) return undefined;
    }
  }

  private async attempt(config: TaskPushNotificationConfig, body: string, contentType: string): Promise<Failure | undefined> {
    const headers: Record<string, string> = { 'content-type': contentType };
    if (config.authentication?.scheme && config.authentication.credentials) headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
    else if (config.token) headers['x-a2a-notification-token'] = config.token;
    try {
      // Checked again as it is sent, by the one lookup its connection is made with (the policy may have changed
      // since the config was set, the name resolve elsewhere): the egress policy and, for plain http, a public address.
      // A second lookup to check first would judge an address the connection might not go to, and cost a lookup.
      const response = await this.http.request({ url: config.url, method: 'POST', headers, body, timeoutMs: this.timeoutMs, maxResponseBytes: 4096, redirect: 'manual', checkConnectAddress: plainHttpProblem });
      if (response.status >= 200 && response.status < 300) return undefined;
      if (response.status >= 300 && response.status < 400) return { message: `the webhook answered ${response.status} (a redirect, which notifications do not follow)`, retry: false };
      return { message: `the webhook answered ${response.status}`, retry: response.status >= 500 || response.status === 408 || response.status === 429 };
    } catch (err) {
      if (err instanceof EgressRefusedError || (err instanceof HttpError && err.code === 'FORGE_HTTP_REFUSED')) return { message: `refused: ${err.message}`, retry: false };
      return { message: (err as Error).message, retry: true };
    }
  }
}

/** What the update says of its task's state (a task, or a status update, carries one). */
function whatItSays(streamResponse: StreamResponse): Says {
  const payload = streamResponse.payload;
  if (payload?.$case !== 'task' && payload?.$case !== 'statusUpdate') return undefined;
  return FINAL_STATES.has(payload.value.status?.state ?? -1) ? 'final' : 'unfinished';
}

/**
 * Whether a v0.3 webhook reads the update as the task not having ended: its body is then the whole task (the
 * SDK's v0.3 serializer), for an artifact too. The final task carries every artifact, so dropping one loses nothing.
 */
function readsAsUnfinishedTask(streamResponse: StreamResponse, task: Task | undefined): boolean {
  return streamResponse.payload?.$case === 'artifactUpdate' && task !== undefined && !FINAL_STATES.has(task.status?.state ?? -1);
}

/**
 * Which waiting update goes when too many wait: the oldest state a later one supersedes (the webhook learns how
 * the task stands from that one), else the oldest but a final state (how the task ended, which nothing later
 * says). An artifact update carries what no later update repeats.
 */
function indexToDrop(items: Waiting[]): number {
  let lastState = items.length - 1;
  while (lastState >= 0 && items[lastState].says === undefined) lastState--;
  const superseded = items.findIndex((item, i) => item.says === 'unfinished' && i < lastState);
  if (superseded >= 0) return superseded;
  const notFinal = items.findIndex((item) => item.says !== 'final');
  return notFinal >= 0 ? notFinal : 0;
}

/** Drops the updates of `items` that say their task has not ended (it has: a final state is queued behind them). */
function dropUnfinished(items: Waiting[]): void {
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i].says !== 'unfinished') continue;
    items[i].snapshot = undefined;
    items.splice(i, 1);
  }
}

function taskIdOf(streamResponse: StreamResponse): string {
  const payload = streamResponse.payload;
  if (!payload) return '';
  return payload.$case === 'task' ? payload.value.id : payload.value.taskId;
}
