/**
 * Starts a running agent from a manifest and a registry — the same code for
 * `node runtime.mjs serve` (the bundle) and `forge run` (sources): the state
 * store (files under .forge/, or Postgres shared by replicas), the model
 * client, the HTTP server, and a graceful shutdown on SIGTERM/SIGINT (drain,
 * finish in-flight work, fail what is left) that also stops the tool workers.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, type AgentModel } from '../agent/agent.ts';
import type { ApprovalGate } from '../agent/approval-gate.ts';
import { createModelClient, missingApiKeys, type ModelNotices } from '../agent/providers/create-model.ts';
import type { ModelRequest } from '../agent/messages.ts';
import type { AgentManifest } from '../manifest.ts';
import type { HttpClient } from '../net/http-client.ts';
import type { Logger } from '../tools/model.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { startAgentServer, type RunningServer } from './agent-server.ts';
import type { HttpLimits } from './http-limits.ts';
import { AuthConfigError, resolveAuth } from './auth.ts';
import { publicUrlProblem } from './public-url.ts';
import { clientCalls } from './client-calls.ts';
import { ApprovalPolicy } from '../guard/approval-policy.ts';
import type { Approver } from '../guard/approver.ts';
import { policyGate } from '../agent/policy-gate.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import type { ExtraRoutes } from './observability-routes.ts';
import { countFiring, startTelemetry } from '../telemetry/serve-telemetry.ts';
import { setActiveState } from '../state/active-state.ts';
import { ForgedStore, forgedRoot } from '../tools/emergent/forged-store.ts';
import { FileConversations } from '../state/file-conversations.ts';
import { leaseFrom, openStateStore } from '../state/open-store.ts';
import { lockFileStore, type FileStoreLock } from '../state/file-store-lock.ts';
import type { ConversationStore, StateStore } from '../state/store.ts';
import { delay } from '../duration.ts';
import { stopTiming, type StopTiming } from './lifecycle.ts';
import { mcpSessionsWanted } from './mcp-endpoint.ts';
import { maxTurnsSetting } from './a2a/turn-limit.ts';
import { storeReadiness } from './store-readiness.ts';
import { STOP_SIGNAL_NAMES } from '../stop-signals.ts';
import type { PushDelivery } from './a2a/push-notifications.ts';

export interface ServeOptions {
  manifest: AgentManifest;
  registry: ToolRegistry;
  workDir: string;
  host: string;
  port: number;
  noAuth?: boolean;
  publicUrl?: string;
  env?: NodeJS.ProcessEnv;
  http: HttpClient;
  gate?: ApprovalGate;
  log: Logger;
  /** Written to, once, when a token is generated (so a person can use it). */
  announce?: (line: string) => void;
  maxIterations?: number;
  /** Routes a front end adds (the studio in `forge run --dev`). */
  extraRoutes?: ExtraRoutes;
  /** HTTP deadlines, connection cap and JSON depth (default: http-limits.ts, FORGE_HTTP_LIMITS). */
  limits?: Partial<HttpLimits>;
  /** The state store to use (default: opened from FORGE_STATE_URL / forge.yaml `state:`, else files). */
  state?: StateStore;
  /** Keep MCP sessions in this process (default: FORGE_MCP_SESSIONS=stateful, else stateless). */
  mcpSessions?: boolean;
  /** How A2A push notifications are tried (tests shorten the waits). */
  pushDelivery?: PushDelivery;
  /** What a front end stops first when the agent stops (`forge run --dev`: its file watcher and the studio). */
  beforeStop?: () => void;
}

export interface RunningAgent extends RunningServer {
  agent: Agent;
  token?: string;
  state: StateStore;
  /** How SIGTERM stops it (drain delay, grace period). */
  timing: StopTiming;
  /** Stops the server and the tool workers; with `drainMs`, /readyz is 503 that long first while requests are still served. */
  stop(graceMs?: number, drainMs?: number): Promise<void>;
}

export function createAgent(options: Pick<ServeOptions, 'manifest' | 'registry' | 'workDir' | 'env' | 'http' | 'gate' | 'log' | 'maxIterations'> & { subApprover?: Approver; sessions?: ConversationStore }): Agent {
  const { manifest, registry } = options;
  // The registry holds the policy every call goes through; the agent asks the same one first.
  // Asked at each decision: `forge run --dev` puts a saved approval: in force in the registry (a registry without one gets the manifest's).
  let fallback: ApprovalPolicy | undefined;
  const gate = options.gate ?? policyGate(() => registry.approval ?? (fallback ??= ApprovalPolicy.create(manifest.approval)), (name) => registry.get(name));
  return new Agent({
    manifest,
    // The gate has decided before the loop calls a tool, so the call runs as approved.
    tools: clientCalls(registry, options.subApprover),
    ...agentModel(manifest.model, options),
    gate,
    sessions: options.sessions ?? new FileConversations(join(options.workDir, '.forge', 'sessions')),
    ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
  });
}

/** The model client and its turn settings (forge.yaml's `model:`), at start and when `forge run --dev` sees it saved. */
export function agentModel(settings: AgentManifest['model'], options: Pick<ServeOptions, 'http' | 'env' | 'log'>): AgentModel {
  // The model's connections apart from the tools': a tool a caller steers never shares a socket with a conversation's model call.
  // Each names the task and conversation it was for, as the task's own lines do: with several turns in flight
  // (and no trace ids, tracing off) an operator could not tell whose call was asked again.
  const notices: ModelNotices = {
    retry: (model, err, delayMs, request) => options.log.warn(`model ${model} failed${forWhom(request)}, asking it again in ${(delayMs / 1000).toFixed(1)} s: ${err.message}`),
    fallback: (failed, err, request) => options.log.warn(`model ${failed} failed${forWhom(request)}, trying the next: ${err.message}`),
  };
  const model = settings ? createModelClient(settings, options.http.withOwnPool(), options.env ?? process.env, notices) : undefined;
  return { model, maxIterations: settings?.max_iterations, maxTokens: settings?.max_tokens, temperature: settings?.temperature };
}

/** ` for task T (context C)`, as much of it as the request knows (a scheduled task's turn has a context, no task). */
function forWhom(request: Pick<ModelRequest, 'task' | 'conversation'>): string {
  if (request.task) return ` for task ${request.task}${request.conversation ? ` (context ${request.conversation})` : ''}`;
  return request.conversation ? ` (context ${request.conversation})` : '';
}

export async function serveAgent(options: ServeOptions): Promise<RunningAgent> {
  const env = options.env ?? process.env;
  const state = options.state ?? (await openStateStore({ workDir: options.workDir, env, configured: options.manifest.state, log: options.log, sweeps: true, forgedFiles: new ForgedStore(forgedRoot(options.workDir)) }));
  let lock: FileStoreLock | undefined;
  try {
    // The card advertises it and /mcp takes its origin as the agent's own: a typo would only show in clients that cannot
    // connect. Checked first: before a token is generated, and before a lock from another container is waited on.
    const urlProblem = publicUrlProblem(options.publicUrl);
    if (urlProblem) throw new AuthConfigError(urlProblem, 'set it to the address clients reach the agent at: FORGE_PUBLIC_URL=https://agent.example.com');
    lock = await lockStateDir(state, env, options.log);
    const running = await serveWithState(options, env, state, lock);
    lock?.serving(running.url);
    return running;
  } catch (err) {
    lock?.release();
    void setActiveState(undefined);
    if (!options.state) await state.close().catch(() => {});
    throw err;
  }
}

/** A file store serves one process: this one holds its directory while it serves (Postgres is shared by design). */
async function lockStateDir(state: StateStore, env: NodeJS.ProcessEnv, log: Logger): Promise<FileStoreLock | undefined> {
  return state.kind === 'file' ? lockFileStore(state.where, { leaseMs: leaseFrom(env), log }) : undefined;
}

async function serveWithState(options: ServeOptions, env: NodeJS.ProcessEnv, state: StateStore, lock: FileStoreLock | undefined): Promise<RunningAgent> {
  const auth = resolveAuth({ workDir: options.workDir, env, noAuth: options.noAuth ?? false, host: options.host, shared: state.shared });
  if (state.shared && !options.publicUrl) {
    throw new AuthConfigError('a shared state store (replicas) needs FORGE_PUBLIC_URL (or --public-url): the agent card must name the service clients reach, not one pod', 'set FORGE_PUBLIC_URL (the same for every replica) to the address clients reach the agent at, e.g. https://agent.example.com');
  }
  await activateState(state, options.log);
  // Which store the conversations and tasks go to: a missing FORGE_STATE_URL shows here, not after a restart lost them.
  options.log.info(`state: ${state.kind === 'file' ? `file store at ${state.where}` : `postgres at ${state.where} (this replica: ${state.replicaId})`}`);
  // A model without its key answers every message with the provider's 401 (or a network error): said at start.
  for (const { model, variable } of options.manifest.model ? missingApiKeys(options.manifest.model, env) : []) {
    options.log.warn(`model ${model} has no API key (FORGE_MODEL_KEY): ${variable} is not set, nor ${variable}_FILE; messages to it will fail until it is (the tools are served)`);
  }
  const agent = createAgent({ ...options, sessions: state.conversations });
  const telemetry = await startTelemetry(options);
  let server: Awaited<ReturnType<typeof startAgentServer>>;
  try {
    server = await startAgentServer({
      manifest: options.manifest,
      // Read at each call: `forge run --dev` updates the manifest's approval: when forge.yaml is saved.
      tools: clientCalls(options.registry, undefined, () => options.manifest.approval?.clients),
      agent,
      auth,
      host: options.host,
      port: options.port,
      publicUrl: options.publicUrl,
      log: options.log,
      metricsPublic: options.manifest.metrics === 'public',
      extraRoutes: options.extraRoutes,
      limits: options.limits,
      state,
      http: options.http,
      pushDelivery: options.pushDelivery,
      mcpSessions: options.mcpSessions ?? mcpSessionsWanted(env),
      maxTurns: maxTurnsSetting(env),
      notReady: storeReadiness(state),
      unhealthyTools: () =>
        options.registry
          .list()
          .map((tool) => ({ name: tool.name, health: tool.health?.() }))
          .filter((t) => t.health && !t.health.healthy)
          .map((t) => ({ name: t.name, detail: t.health!.detail, ...(t.health!.circuit ? { circuit: t.health!.circuit } : {}) })),
    });
  } catch (err) {
    // Not started (a port in use): a token generated for this start was never shown, so it is not kept either;
    // the next start generates one and shows it, instead of only naming a file.
    if (auth.generatedAt) rmSync(auth.generatedAt, { force: true });
    await telemetry.shutdown().catch(() => {});
    throw err;
  }
  if (auth.generatedAt) options.announce?.(`auth token (saved in ${auth.generatedAt}, outside the work dir; shown once): ${auth.token}`);
  else if (auth.movedFrom) options.announce?.(`auth token moved out of the work dir: ${auth.movedFrom} -> ${auth.file}`);
  // Every later start says where the token is (never the token): a person who missed the first start finds it.
  else if (auth.token) options.announce?.(`auth token: ${auth.file ? `in ${auth.file}` : 'FORGE_AUTH_TOKEN'}`);

  const scheduler = startScheduledTasks(options, agent, state);

  let stopping: Promise<void> | undefined;
  const stop = (graceMs?: number, drainMs = 0) => {
    stopping ??= (async () => {
      options.beforeStop?.();
      server.drain();
      if (drainMs > 0) await delay(drainMs);
      await Promise.race([scheduler.stop(), delay(graceMs ?? 10_000)]);
      // No schedule runs here any more: a successor (a restart) may take the state dir while in-flight calls finish.
      lock?.release();
      // The lame duck's wait for connections to stop coming is for a load balancer, which a drain delay stands for.
      await server.close(graceMs, drainMs > 0 ? undefined : 0);
      await options.registry.close();
      await telemetry.shutdown();
      void setActiveState(undefined);
      if (!options.state) await state.close().catch(() => {});
    })();
    return stopping;
  };
  return { ...server, agent, token: auth.token, state, timing: stopTiming(env, state.shared), stop };
}

/** How long serve waits, before it answers anyone, for what must follow the state store first. */
const STATE_FOLLOWERS_WAIT_MS = 10_000;

/**
 * Makes `state` the process's, and waits for forge_tool's first look at it when replicas share it:
 * until that look, this replica serves the forged tools its own disk brought back, which may hold a
 * tool (or a version) removed from the fleet while it was down. A store that does not answer in time
 * is not allowed to hold the start up for good: the start goes on, and says so.
 */
async function activateState(state: StateStore, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const followed = await Promise.race([
    setActiveState(state).then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), STATE_FOLLOWERS_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!followed) log.warn(`forged tools: the state store did not answer in ${STATE_FOLLOWERS_WAIT_MS / 1000} s; until it does, this replica serves the forged tools its work dir holds, even one removed from the store meanwhile`);
}

/**
 * Scheduled tasks (forge.yaml `schedules:` and those set with schedule_set)
 * are given to the agent when due, each in its own conversation
 * (`schedule-<id>`), so a task's runs see what the earlier runs did. The
 * firing is recorded as failed when there is no model or when the turn
 * stopped for an approval nobody is there to give.
 */
function startScheduledTasks(options: ServeOptions, agent: Agent, state: StateStore): Scheduler {
  const scheduler = new Scheduler({
    workDir: options.workDir,
    store: state.schedules,
    configTasks: (options.manifest.schedules ?? []).map((s) => ({ ...s, source: 'config' as const })),
    log: options.log,
    onFire: countFiring(async (task) => {
      const outcome = await agent.send(`schedule-${task.id}`, task.task);
      if (outcome.status === 'input-required') {
        throw new Error(`stopped for approval of ${outcome.requests.map((r) => r.tool).join(', ')}; answer it in context schedule-${task.id}`);
      }
      options.log.info(`scheduled task ${task.id} done`);
    }),
  });
  scheduler.start();
  return scheduler;
}

/**
 * SIGTERM/SIGINT → drain (readyz 503 while still serving), finish in-flight
 * work within the grace period, then exit — the bundle's serve and `forge
 * run` alike, with FORGE_DRAIN_DELAY and FORGE_SHUTDOWN_GRACE. A second
 * signal exits at once, whatever the stop waits for (the drain, connections
 * still coming, calls in flight).
 * SIGHUP (the terminal of a `forge run` closed) stops it the same way: its
 * default would end the process with no 'exit' event, leaving the tool
 * process groups of calls in flight running.
 */
export function stopOnSignals(agent: Pick<RunningAgent, 'stop' | 'timing'>, log: Logger): void {
  let signalled = false;
  for (const signal of STOP_SIGNAL_NAMES) {
    process.on(signal, () => {
      if (signalled) process.exit(130);
      signalled = true;
      const timing = agent.timing;
      log.info(`${signal}: ${timing.drainMs ? `draining for ${timing.drainMs} ms, then ` : ''}finishing in-flight requests, then stopping`);
      const started = performance.now();
      const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s after ${signal}`;
      // The last line, once the calls have ended, the store is closed and the traces are sent: an operator
      // (or a log pipeline) sees the stop went through, and how much of the grace period it took.
      void agent.stop(timing.graceMs, timing.drainMs).then(
        () => {
          log.info(`stopped, ${took()}`);
          process.exit(0);
        },
        (err: unknown) => {
          log.warn(`stopping failed, ${took()}: ${(err as Error).message}`);
          process.exit(1);
        },
      );
    });
  }
}
