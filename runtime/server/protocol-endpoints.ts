/**
 * The endpoints that speak a protocol through its SDK: A2A JSON-RPC (with
 * its executor, task store, push notifications and cross-replica cancels) and MCP over
 * Streamable HTTP. agent-server.ts loads this module on the first request
 * that needs it, so the SDKs (several hundred kB of code to evaluate) are
 * not on the path from `serve` to the first answered request; health, REST
 * and the agent card never load them. A task can only run in this process
 * after an A2A request loaded this module, so subscribing to cancels here
 * misses none.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from '../agent/agent.ts';
import type { AgentManifest } from '../manifest.ts';
import type { HttpClient } from '../net/http-client.ts';
import { MemoryPushConfigs } from '../state/memory-push-configs.ts';
import type { PushConfigRecords, StateStore } from '../state/store.ts';
import { mcpSession } from '../state/session-owners.ts';
import type { Logger } from '../tools/model.ts';
import { DefaultRequestHandler, InMemoryTaskStore } from '../vendor/a2a.ts';
import { buildAgentCard } from './a2a/agent-card.ts';
import { refuseLongContextIds } from './a2a/context-ids.ts';
import { ForgeAgentExecutor } from './a2a/executor.ts';
import { createA2AJsonRpcHandler } from './a2a/json-rpc.ts';
import { PolicyPushSender, type PushDelivery } from './a2a/push-notifications.ts';
import { A2AStoreGuard, SEND_METHODS } from './a2a/store-guard.ts';
import { SubscriberBuses } from './a2a/subscriber-buses.ts';
import { DEFAULT_MAX_TURNS, TurnLimit } from './a2a/turn-limit.ts';
import { checkedPushConfigs, refuseBadWebhooks } from './a2a/webhook-checks.ts';
import { McpDirectEndpoint } from './mcp-direct.ts';
import type { McpHttpEndpoint } from './mcp-http.ts';
import type { McpToolSource } from './mcp-tool-calls.ts';
import type { McpEndpoint } from './mcp-endpoint.ts';

export interface ProtocolEndpoints {
  a2a(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  mcp: McpEndpoint;
  /** Runs A2A tasks (its turns are aborted and failed when the grace period ends). */
  executor: ForgeAgentExecutor;
  /** Stops forwarding cancels from other replicas. */
  close(): void;
  /** Settles when the push notifications under way have been sent (or given up). */
  notificationsSent(): Promise<void>;
}

export interface ProtocolOptions {
  manifest: AgentManifest;
  tools: McpToolSource;
  /** The tools one stateful MCP session sees: agent-tier tools plus the ones it forged itself. */
  sessionTools?: (session: string) => McpToolSource;
  agent: Agent;
  baseUrl: string;
  authRequired: boolean;
  /** Keep MCP sessions in this process (one process only); default: stateless, any replica answers. */
  mcpSessions?: boolean;
  state?: StateStore;
  log: Logger;
  /** How many A2A turns run or wait at once in this process (default 256; FORGE_MAX_TURNS). */
  maxTurns?: number;
  /** The agent's HTTP client (its egress policy): push notifications' webhooks are checked by it and called through it. */
  http: HttpClient;
  /** How push notifications are tried (tests shorten the waits). */
  pushDelivery?: PushDelivery;
}

export function createProtocolEndpoints(options: ProtocolOptions): ProtocolEndpoints {
  const { manifest, tools, agent } = options;
  const mcpIdentity = { name: manifest.agent_id, version: manifest.version };
  // Stateless MCP is answered directly (mcp-direct.ts): no SDK server or transport per request.
  const sessionTools = options.sessionTools ?? (() => tools);
  const mcp: McpEndpoint = options.mcpSessions ? statefulMcp(mcpIdentity, sessionTools, options.state, options.log) : new McpDirectEndpoint(mcpIdentity, tools);
  // Only a shared store (Postgres) goes away while the process runs; files do not need the ping.
  const storeGuard = new A2AStoreGuard(options.state?.shared ? () => options.state!.ping() : undefined, options.log);
  // A turn that loses the store once under way tells the guard, which answers its request.
  const turns = new TurnLimit(options.maxTurns ?? DEFAULT_MAX_TURNS);
  const executor = new ForgeAgentExecutor(agent, options.state?.tasks, (context, err) => void storeGuard.note(context, err), turns, options.log);
  // A resubscribe stream whose client hangs up ends then, not when its task next moves (subscriber-buses.ts).
  const buses = new SubscriberBuses();
  // Webhooks are kept where the tasks are (any replica finds them), each checked against the egress policy first.
  // Their own connections: a webhook is a caller's choice, like a tool's URL, and shares no socket with the tools.
  const pushHttp = options.http.withOwnPool();
  const pushStore: PushConfigRecords = options.state?.pushConfigs ?? new MemoryPushConfigs();
  const pushes = new PolicyPushSender(pushStore, pushHttp, options.log, options.pushDelivery);
  const pushConfigs = checkedPushConfigs(pushStore, pushHttp, (taskId) => pushes.forget(taskId));
  // Final states whose webhooks did not take them (a replica stopped first, a webhook down for every try): from the store.
  const retryingFinals = pushStore.finals ? setInterval(() => void pushes.retryFinals().catch((err: Error) => options.log.warn(`push notifications: cannot look for final states not sent: ${err.message}; looked for again in ${Math.round(pushes.finalRetryMs / 1000)} s`)), pushes.finalRetryMs) : undefined;
  retryingFinals?.unref();
  const requestHandler = new DefaultRequestHandler(buildAgentCard(manifest, options.baseUrl, options.authRequired), options.state?.tasks ?? new InMemoryTaskStore(), executor, buses, pushConfigs, pushes);
  refuseLongContextIds(requestHandler);
  refuseBadWebhooks(requestHandler, pushStore, pushHttp);
  const stopCancels = options.state ? forwardCancels(requestHandler, options.state, executor) : undefined;
  const a2a = createA2AJsonRpcHandler(requestHandler, (method) =>
    SEND_METHODS.has(method) && !agent.hasModel ? { code: -32004, message: 'no model configured: add a `model:` section (provider and name) to forge.yaml; tools are still served over MCP and REST' } : undefined,
    storeGuard,
    turns,
    (context) => buses.hangUp(context),
  );
  return {
    a2a,
    mcp,
    executor,
    close: () => {
      clearInterval(retryingFinals);
      stopCancels?.();
    },
    notificationsSent: () => pushes.settled(),
  };
}

/**
 * Stateful MCP: each session's server under an owner of its own. The session-tier tools a session forged go
 * when it ends (a DELETE, the oldest closed past the cap, the server stopping): no later session has its
 * owner, so no one could call them again, and they would count against max_tools forever. The store removes
 * them for every process serving them (Postgres: every replica); closing every session waits for those
 * removals, so a server stopping does not close the store under them. The SDK's server and transport are
 * loaded at the first MCP request (stateless MCP, the default, never loads them: evaluating the MCP SDK takes
 * about 50 ms).
 */
function statefulMcp(identity: { name: string; version: string }, sessionTools: (session: string) => McpToolSource, state: StateStore | undefined, log: Logger): McpEndpoint {
  const removals = new Set<Promise<void>>();
  let loading: Promise<McpHttpEndpoint> | undefined;
  const endpoint = () =>
    (loading ??= Promise.all([import('./mcp-http.ts'), import('./mcp-server.ts')]).then(([{ McpHttpEndpoint }, { createMcpServer }]) => sessions(McpHttpEndpoint, createMcpServer)));
  const sessions = (Endpoint: typeof McpHttpEndpoint, createMcpServer: typeof import('./mcp-server.ts').createMcpServer) => new Endpoint(() => {
    const session = mcpSession(randomUUID());
    const server = createMcpServer(identity, sessionTools(session));
    const previousOnClose = server.onclose;
    server.onclose = () => {
      previousOnClose?.();
      if (!state) return;
      const removal = state.removeSessionTools([session]).then(
        (removed) => void (removed && log.info(`MCP session ended: removed the ${removed} session tool${removed === 1 ? '' : 's'} forged in it`)),
        (err: Error) => log.warn(`MCP session ended, but the session tools forged in it could not be removed: ${err.message}`),
      );
      removals.add(removal);
      void removal.finally(() => removals.delete(removal));
    };
    return server;
  });
  return {
    handle: async (req, res, body) => (await endpoint()).handle(req, res, body),
    async closeAll() {
      // A load that failed (a tampered vendor/mcp.cjs) left no sessions to close, and must not stop the server's own closing.
      if (loading) await loading.then((endpoint) => endpoint.closeAll(), () => {});
      await Promise.allSettled([...removals]);
    },
  };
}

/**
 * A cancel asked of any replica reaches the one running the turn: the
 * request goes out on the store's channel first, then the SDK records the
 * cancellation; each replica aborts the turn if it runs there.
 */
function forwardCancels(handler: DefaultRequestHandler, state: StateStore, executor: ForgeAgentExecutor): () => void {
  const cancel = handler.cancelTask.bind(handler);
  handler.cancelTask = async (params, context) => {
    if (!executor.cancelHere(params.id)) await state.cancels.request(params.id);
    return cancel(params, context);
  };
  return state.cancels.subscribe((taskId) => executor.cancelHere(taskId));
}
