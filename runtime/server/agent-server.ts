/**
 * The agent's HTTP server: health, the A2A card and JSON-RPC, MCP over
 * Streamable HTTP, and REST for tools — one node:http server, no framework.
 * Every endpoint but health and the agent card needs the bearer token.
 * drain() turns /readyz to 503 while still serving (the load balancer
 * stops sending), with no connection kept alive from then on; shutdown then stops accepting once connections stop coming, lets in-flight requests
 * finish (up to a timeout), then closes what is left.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '../agent/agent.ts';
import type { AgentManifest } from '../manifest.ts';
import type { Logger } from '../tools/model.ts';
import type { AuthSettings } from './auth.ts';
import type { StateStore } from '../state/store.ts';
import type { McpToolSource } from './mcp-server.ts';
import type { ProtocolEndpoints } from './protocol-endpoints.ts';
import type { HttpClient } from '../net/http-client.ts';
import type { PushDelivery } from './a2a/push-notifications.ts';
import { AgentRoutes } from './agent-routes.ts';
import { BodyTimeoutError, BodyTooLargeError } from './request-body.ts';
import { applyServerLimits, closeUnlessBodyRead, httpLimits, JsonTooDeepError, serverOptions, type HttpLimits } from './http-limits.ts';
import { requestPath } from './request-target.ts';
import { listenFailure } from './listen-failure.ts';
import { sendFailure } from './respond.ts';
import { SERVER_STOPPING } from './rest-tools.ts';
import type { ExtraRoutes } from './observability-routes.ts';
import { traceRequest } from '../telemetry/trace-request.ts';
import { ClosingConnections } from './closing-connections.ts';
import type { CallStop } from '../tools/call-stop.ts';

export interface AgentServerOptions {
  manifest: AgentManifest;
  tools: McpToolSource;
  agent: Agent;
  auth: AuthSettings;
  host: string;
  port: number;
  /** The URL clients reach the agent at (the card advertises it); default: the request's Host. */
  publicUrl?: string;
  maxBodyBytes?: number;
  log: Logger;
  /** Tools that cannot serve calls right now (for /readyz). */
  unhealthyTools?: () => { name: string; detail?: string; circuit?: string }[];
  /** Header/body deadlines, connection cap, JSON depth (default: http-limits.ts, FORGE_HTTP_LIMITS). */
  limits?: Partial<HttpLimits>;
  /** /metrics without the bearer token (forge.yaml `metrics: public`). */
  metricsPublic?: boolean;
  /** Routes a front end adds (the studio in `forge run --dev`). */
  extraRoutes?: ExtraRoutes;
  /** Where A2A tasks, cancel requests and files live (default: this process's memory). */
  state?: StateStore;
  /** Keep MCP sessions in this process (one process only); default: stateless, any replica answers. */
  mcpSessions?: boolean;
  /** How many A2A turns run or wait at once in this process (default 256; FORGE_MAX_TURNS). */
  maxTurns?: number;
  /** A reason the agent cannot serve (the state store is unreachable), for /readyz. */
  notReady?: () => Promise<string | undefined>;
  /** The agent's HTTP client: A2A push notifications go out through it (and its egress policy). */
  http: HttpClient;
  /** How push notifications are tried (tests shorten the waits). */
  pushDelivery?: PushDelivery;
}

export interface RunningServer {
  url: string;
  port: number;
  server: Server;
  /** /readyz answers 503 from now on; requests are still served. */
  drain(): void;
  /** Stops accepting once connections stop coming, waits for in-flight requests, both within `graceMs`, then closes the rest. */
  close(graceMs?: number, quietMs?: number): Promise<void>;
}

export async function startAgentServer(options: AgentServerOptions): Promise<RunningServer> {
  const limits = httpLimits(options.limits);
  const routes = new AgentRoutes(options, limits);
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const connections = new ClosingConnections();

  const server = createServer(serverOptions(limits), (req, res) => {
    connections.track(res);
    // An MCP client's standing event stream (GET /mcp) is not a call in flight.
    const counted = !(req.method === 'GET' && req.url?.startsWith('/mcp'));
    if (counted) inFlight++;
    // One listener per request (the hot path): the stop's answers in flight, then the count of calls.
    res.on('close', () => {
      connections.forget(res);
      if (!counted) return;
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    closeUnlessBodyRead(req, res);
    traceRequest(req, res, () => routes.handle(req, res)).catch((err: unknown) => answerFailure(err, req, res, options.log));
  });
  applyServerLimits(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenFailure(err, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // With a store that keeps which webhooks took a task's final state (Postgres), A2A is made now, not at the first A2A
  // or MCP request: it looks for the final states not sent, and this replica may be asked nothing (it started after the
  // one that ran the task stopped, and the task's client waits for its webhook). A failure to make it is answered to
  // the requests that need it, as it would be when made for them.
  if (options.state?.pushConfigs.finals) routes.protocol().catch(() => {});
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    drain() {
      routes.shuttingDown = true;
      connections.begin(server);
    },
    close: (graceMs = 10_000, quietMs?: number) =>
      closeServer(server, { graceMs, quietMs, protocols: routes.protocols, stops: routes.stops, state: options.state, inFlight: () => inFlight, onIdle: (resolve) => (idle = resolve), connections, shutDown: () => ((routes.shuttingDown = true), connections.begin(server)) }),
  };
}

/**
 * The answer to a request whose handling threw: the body limits' own statuses, else a 500
 * (logged). On /mcp and /a2a they are JSON-RPC error objects, as a parse error there is.
 */
function answerFailure(err: unknown, req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const path = requestPath(req.url) ?? '';
  if (err instanceof BodyTooLargeError) {
    if (!res.headersSent) sendFailure(res, path, 413, { code: 'FORGE_BODY_TOO_LARGE', message: err.message, hint: 'send a smaller body', rpcCode: INVALID_REQUEST });
    req.resume();
    return;
  }
  if (err instanceof BodyTimeoutError) {
    // The connection goes too: a client that trickles its body gets no second chance on it.
    res.setHeader('connection', 'close');
    if (!res.headersSent) sendFailure(res, path, 408, { code: 'FORGE_BODY_TIMEOUT', message: err.message, hint: 'send the whole body without pausing' });
    res.on('finish', () => req.socket.destroy());
    return;
  }
  if (err instanceof JsonTooDeepError) {
    if (!res.headersSent) sendFailure(res, path, 400, { code: 'FORGE_JSON_TOO_DEEP', message: err.message, hint: 'flatten the arguments', rpcCode: INVALID_REQUEST });
    return;
  }
  log.warn(`request ${req.method} ${req.url} failed: ${(err as Error).stack ?? err}`);
  if (!res.headersSent) sendFailure(res, path, 500, { code: 'FORGE_INTERNAL', message: 'the request failed inside the agent; see its log', rpcCode: INTERNAL_ERROR });
  else res.end();
}

/** JSON-RPC's codes for a request it refuses as such, and for a failure inside the server. */
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

interface ClosingState {
  graceMs: number;
  /** How long no new connection must come before the listener closes (closing-connections.ts; default QUIET_BEFORE_CLOSE_MS). */
  quietMs?: number;
  protocols: Promise<ProtocolEndpoints> | undefined;
  stops: Set<CallStop>;
  state: AgentServerOptions['state'];
  inFlight(): number;
  /** Registers the callback the last in-flight request's end calls. */
  onIdle(resolve: () => void): void;
  connections: ClosingConnections;
  shutDown(): void;
}

/** Stops accepting once connections stop coming, waits for in-flight requests up to the grace period, fails the turns still running, then closes the rest. */
async function closeServer(server: Server, closing: ClosingState): Promise<void> {
  const deadline = performance.now() + closing.graceMs;
  closing.shutDown();
  // Serving on until connections stop coming, within the grace period (closing-connections.ts).
  await closing.connections.quiet(deadline, closing.quietMs);
  const loaded = closing.protocols ? await closing.protocols : undefined;
  loaded?.close();
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const settled = (ms: number) => Promise.race([new Promise<void>((resolve) => closing.onIdle(resolve)), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  if (closing.inFlight() > 0) await settled(Math.max(0, deadline - performance.now()));
  // Turns still running past the grace period end failed — in the store too, so no task stays "working".
  const unfinished = loaded?.executor.runningTasks() ?? [];
  if (unfinished.length) {
    loaded!.executor.abortAll();
    if (closing.inFlight() > 0) await settled(2000);
    await Promise.allSettled(unfinished.map((id) => closing.state?.tasks.fail(id, 'the agent stopped before the task finished; send it again')));
  }
  // REST and MCP calls still running are stopped, and answered (a cancelled call's error) before their connections
  // close: a client whose call was accepted gets an answer, not an empty reply.
  for (const stop of closing.stops) stop.abort(SERVER_STOPPING);
  await loaded?.mcp.closeAll();
  if (closing.inFlight() > 0) await settled(2000);
  // A finished task's last notifications go out before the store closes (a webhook that does not answer is not waited for long).
  if (loaded) await Promise.race([loaded.notificationsSent(), new Promise((resolve) => setTimeout(resolve, Math.min(closing.graceMs, 2000)).unref())]);
  server.closeAllConnections();
  await stopped;
}
