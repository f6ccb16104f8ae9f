/**
 * Where an A2A push notification's webhook may point (push-notifications.ts
 * sends them). A webhook is a URL a caller gives the agent to call, so it is
 * the first thing an attacker aims at the agent's own network
 * (169.254.169.254, a loopback admin port). It passes the agent's egress
 * policy (forge.yaml `egress:`) like every outbound request: its host in
 * allowed_domains (or an address in allowed_addresses), and a loopback,
 * private, link-local or metadata address only if allowed_addresses lists
 * it. A webhook on a public address must be https (the token and the task
 * travel in the request); plain http is taken only for addresses
 * allowed_addresses lets through (a sidecar, a service on the private
 * network). Checked when the config is set (refused with invalid params,
 * not stored, here) and again as every notification connects, on the
 * address it connects to (plainHttpProblem, by the sender).
 */
import type { SendMessageRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { DefaultRequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import { classifyAddress, isPublic } from '../../guard/ip-address.ts';
import { HttpError, type HttpClient } from '../../net/http-client.ts';
import { redact } from '../../state/shown-url.ts';
import type { PushConfigRecords } from '../../state/store.ts';
import { RequestMalformedError, TaskNotFoundError } from '../../vendor/a2a.ts';

/** How many webhooks one task may have. */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;
/**
 * How large one config may be (its URL, token and credentials, as JSON): a
 * webhook's URL and a bearer token fit many times over, and every config is
 * kept (in memory with the `file:` store) and read again for each update.
 */
export const MAX_PUSH_CONFIG_BYTES = 8 * 1024;

/**
 * Why `url` cannot be a webhook now, or undefined when it can: not an
 * http(s) URL, refused by the egress policy, unresolvable, or plain http
 * to a public address.
 */
export async function webhookProblem(url: string, http: HttpClient): Promise<string | undefined> {
  if (!url) return 'the webhook url is missing';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the webhook url is not a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `the webhook must be an https URL, not ${parsed.protocol}`;
  let addresses: string[];
  try {
    const checked = await http.checkDestination(parsed);
    if (checked.refusal) return `the agent's egress policy refuses ${redact(url)}: ${checked.refusal.rule}${checked.refusal.hint ? ` (${checked.refusal.hint})` : ''}`;
    addresses = checked.addresses;
  } catch (err) {
    return `cannot check ${redact(url)}: ${err instanceof HttpError ? err.message : String(err)}`;
  }
  for (const address of addresses) {
    const problem = plainHttpProblem(parsed, address);
    if (problem) return problem;
  }
  return undefined;
}

/** Why a plain-http webhook may not go to `address` (a public one), or undefined. */
export function plainHttpProblem(url: URL, address: string): string | undefined {
  if (url.protocol !== 'http:') return undefined;
  const cls = classifyAddress(address);
  if (cls && !isPublic(cls)) return undefined;
  return `${redact(url.href)} is plain http to a public address: a webhook must be https, except on an address egress.allowed_addresses allows (loopback, a private network)`;
}

/** Why `config` cannot be kept for `taskId` (empty: a task not made yet), or undefined when it can. */
async function configProblem(store: PushConfigRecords, http: HttpClient, taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<string | undefined> {
  const problem = await webhookProblemOf(config, http);
  if (problem || !taskId) return problem;
  const existing = await store.load(taskId, context);
  if (existing.length >= MAX_PUSH_CONFIGS_PER_TASK && !existing.some((c) => config.id && c.id === config.id)) {
    return `task ${taskId} has ${existing.length} already, the most it may have; delete one first`;
  }
  return undefined;
}

/** Why `config` itself (its size, its webhook) cannot be kept, or undefined; how many its task has is not looked at. */
async function webhookProblemOf(config: TaskPushNotificationConfig, http: HttpClient): Promise<string | undefined> {
  const size = Buffer.byteLength(JSON.stringify(config ?? {}));
  if (size > MAX_PUSH_CONFIG_BYTES) return `the config is ${size} bytes, more than the ${MAX_PUSH_CONFIG_BYTES} a webhook's URL, token and credentials may take`;
  return webhookProblem(config.url, http);
}

/**
 * The state store's configs, with each one checked before it is kept:
 * whether from a set call or from message/send's configuration, a refused
 * webhook answers the request with invalid params and is not stored (the
 * message is not run).
 */
export function checkedPushConfigs(store: PushConfigRecords, http: HttpClient, onChange?: (taskId: string) => void): PushConfigRecords {
  return {
    async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
      const problem = await webhookProblemOf(config, http);
      if (problem) throw new RequestMalformedError(`push notification config refused: ${problem}`);
      // Counted as it is kept (saveWithin), not read and counted first: sets running at once would all pass a count made before.
      // A set's task must still be there as it is kept: it may have been dropped since the SDK found it (during the check above).
      const saved = await store.saveWithin(taskId, context, config, MAX_PUSH_CONFIGS_PER_TASK, settingOnExistingTask.getStore() === true);
      if (saved === 'no task') throw new TaskNotFoundError(`Task not found: ${taskId}`);
      if (saved === 'full') {
        throw new RequestMalformedError(`push notification config refused: task ${taskId} has ${MAX_PUSH_CONFIGS_PER_TASK} already, the most it may have; delete one first`);
      }
      if (saved === 'store full') throw new RequestMalformedError(`push notification config refused: this agent keeps as many tasks' webhooks as it may, and every such task is still running or waiting for its client; set it again once one finishes`);
      onChange?.(taskId);
    },
    saveWithin: (taskId, context, config, max, existingTask) => store.saveWithin(taskId, context, config, max, existingTask),
    load: (taskId, context) => store.load(taskId, context),
    loadWithMetadata: (taskId, context) => store.loadWithMetadata(taskId, context),
    async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
      await store.delete(taskId, context, configId);
      onChange?.(taskId);
    },
  };
}

/** True while the SDK's set of a config on a task it found runs (its save is the checked store's). */
const settingOnExistingTask = new AsyncLocalStorage<boolean>();

/**
 * The SDK's set is told apart from message/send's (see checkedPushConfigs).
 * A message whose configuration names a webhook that would be refused is
 * refused before the SDK sees it: its streaming path makes the task's event
 * bus before it saves the config, and a refusal there left that bus behind
 * (one per refused request).
 */
export function refuseBadWebhooks(handler: DefaultRequestHandler, store: PushConfigRecords, http: HttpClient): void {
  const check = async (params: SendMessageRequest, context: ServerCallContext) => {
    const config = params?.configuration?.taskPushNotificationConfig;
    if (!config) return;
    const problem = await configProblem(store, http, params.message?.taskId ?? '', context, config);
    if (problem) throw new RequestMalformedError(`push notification config refused: ${problem}`);
  };
  // The SDK's set (CreateTaskPushNotificationConfig) saves through the store only once it found the task: the store is told so
  // (a message/send's config may come before its task is first saved).
  const create = handler.createTaskPushNotificationConfig.bind(handler);
  handler.createTaskPushNotificationConfig = (params, context) => settingOnExistingTask.run(true, () => create(params, context));
  const send = handler.sendMessage.bind(handler);
  handler.sendMessage = async (params, context) => {
    await check(params, context);
    return send(params, context);
  };
  const stream = handler.sendMessageStream.bind(handler);
  handler.sendMessageStream = async function* (params, context) {
    await check(params, context);
    yield* stream(params, context);
  };
}
