/**
 * The agent's HTTP server: health, the A2A card and JSON-RPC, MCP over
 * Streamable HTTP, and REST for tools — one node:http server, no framework.
 * Every endpoint but health and the agent card needs the bearer token.
 * drain() turns /readyz to 503 while still serving (the load balancer
 * stops sending); shutdown then stops accepting, lets in-flight requests
 * finish (up to a timeout), then closes what is left.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '../agent/agent.ts';
import type { AgentManifest } from '../manifest.ts';
import type { Logger } from '../tools/model.ts';
import { agentCardJson, buildAgentCard, legacyAgentCard } from './a2a/agent-card.ts';
import { isAuthorized, type AuthSettings } from './auth.ts';
import type { StateStore } from '../state/store.ts';
import { serveStoredFile } from './stored-files.ts';
import type { McpToolSource } from './mcp-server.ts';
import type { ProtocolEndpoints } from './protocol-endpoints.ts';
import { sessionView } from '../tools/emergent/session-view.ts';
import { BodyTimeoutError, BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readBody } from './request-body.ts';
import { applyServerLimits, decodePathSegment, httpLimits, JsonTooDeepError, jsonNestsDeeperThan, serverOptions, type HttpLimits } from './http-limits.ts';
import { sandboxStatus } from '../exec/tool-sandbox.ts';
import { sendError, sendJson } from './respond.ts';
import { callTool, describeTool, listTools } from './rest-tools.ts';
import { serveObservabilityRoutes, type ExtraRoutes } from './observability-routes.ts';
import { traceRequest } from '../telemetry/trace-request.ts';

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
  /** A reason the agent cannot serve (the state store is unreachable), for /readyz. */
  notReady?: () => Promise<string | undefined>;
}

export interface RunningServer {
  url: string;
  port: number;
  server: Server;
  /** /readyz answers 503 from now on; requests are still served. */
  drain(): void;
  /** Stops accepting, waits for in-flight requests up to `graceMs`, then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

export async function startAgentServer(options: AgentServerOptions): Promise<RunningServer> {
  const { manifest, agent, auth, log } = options;
  // REST (and MCP without sessions) has no session: it sees agent-tier forged tools; an MCP session sees its own too.
  const tools = sessionView(options.tools, undefined);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limits = httpLimits(options.limits);
  const bodyOf = async (req: IncomingMessage): Promise<Buffer> => {
    const body = await readBody(req, limit, { idleTimeoutMs: limits.bodyIdleTimeoutMs, totalTimeoutMs: limits.bodyTimeoutMs });
    if (jsonNestsDeeperThan(body, limits.maxJsonDepth)) throw new JsonTooDeepError(limits.maxJsonDepth);
    return body;
  };
  const authRequired = auth.token !== undefined;
  const cardFor = (req: IncomingMessage) => buildAgentCard(manifest, options.publicUrl ?? `http://${req.headers.host ?? `${options.host}:${options.port}`}`, authRequired);
  // A2A and MCP (and their SDKs) load on the first request that needs them (protocol-endpoints.ts).
  let protocols: Promise<ProtocolEndpoints> | undefined;
  const protocol = () =>
    (protocols ??= import('./protocol-endpoints.ts').then((m) =>
      m.createProtocolEndpoints({ manifest, tools, sessionTools: (session) => sessionView(options.tools, session), agent, baseUrl: options.publicUrl ?? `http://${options.host}:${options.port}`, authRequired, mcpSessions: options.mcpSessions, state: options.state }),
    ));

  let shuttingDown = false;
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const controllers = new Set<AbortController>();

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://agent');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';

    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (shuttingDown) return sendJson(res, 503, { ready: false, reason: 'shutting down' });
      const notReady = await options.notReady?.();
      if (notReady) return sendJson(res, 503, { ready: false, reason: notReady });
      // Readiness is the server's: a failing tool is reported (its circuit refuses its calls), never the pod drained.
      const unhealthy = options.unhealthyTools?.() ?? [];
      const sandbox = sandboxStatus();
      return sendJson(res, 200, { ready: true, tools: tools.list().length, model: agent.hasModel, ...(unhealthy.length ? { unhealthy } : {}), ...(sandbox ? { sandbox } : {}) });
    }
    if (method === 'GET' && (path === '/.well-known/agent-card.json' || path === '/.well-known/agent.json')) {
      const version = req.headers['a2a-version'] as string | undefined;
      const legacy = path === '/.well-known/agent.json' || !version || /^0\./.test(version);
      return sendJson(res, 200, legacy ? legacyAgentCard(cardFor(req)) : await agentCardJson(cardFor(req)), { vary: 'A2A-Version' });
    }

    if (await serveObservabilityRoutes(req, res, path, { auth, metricsPublic: options.metricsPublic, extraRoutes: options.extraRoutes })) return;
    if (!isAuthorized(req, auth)) {
      // Its body is never read: the connection closes with the answer, so it cannot be held open by trickling one.
      res.setHeader('connection', 'close');
      return sendError(res, 401, 'FORGE_UNAUTHORIZED', 'missing or wrong bearer token', 'send "Authorization: Bearer <token>" (FORGE_AUTH_TOKEN, or the token file the agent printed at start)');
    }

    if (path === '/mcp') {
      const body = method === 'POST' ? parseJson(await bodyOf(req)) : undefined;
      if (body === PARSE_FAILED) return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } });
      return (await protocol()).mcp.handle(req, res, body);
    }
    if ((path === '/a2a' || path === '/') && method === 'POST') return (await protocol()).a2a(req, res, await bodyOf(req));
    if (path === '/tools' && method === 'GET') return listTools(res, tools);
    const filePath = /^\/files\/([^/]+)$/.exec(path);
    if (filePath && method === 'GET' && options.state) {
      const file = decodePathSegment(filePath[1]);
      if (file === undefined) return sendError(res, 400, 'FORGE_BAD_PATH', `the path ${path} has malformed percent-encoding`);
      return serveStoredFile(res, options.state.files, file);
    }
    const toolPath = /^\/tools\/([^/]+)$/.exec(path);
    if (toolPath) {
      const name = decodePathSegment(toolPath[1]);
      if (name === undefined) return sendError(res, 400, 'FORGE_BAD_PATH', `the path ${path} has malformed percent-encoding`, 'encode tool names with encodeURIComponent');
      if (method === 'GET') return describeTool(res, tools, name);
      if (method === 'POST') {
        const controller = new AbortController();
        controllers.add(controller);
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
          controllers.delete(controller);
        });
        return callTool(res, tools, name, await bodyOf(req), controller.signal);
      }
      return sendError(res, 405, 'FORGE_METHOD', `${method} is not allowed on ${path}`, 'use GET to describe a tool or POST to call it');
    }
    return sendError(res, 404, 'FORGE_NOT_FOUND', `nothing at ${method} ${path}`, 'endpoints: /healthz /readyz /.well-known/agent-card.json /a2a /mcp /tools');
  };

  const server = createServer(serverOptions(limits), (req, res) => {
    // An MCP client's standing event stream (GET /mcp) is not a call in flight.
    const counted = !(req.method === 'GET' && req.url?.startsWith('/mcp'));
    if (counted) inFlight++;
    res.on('close', () => {
      if (!counted) return;
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    traceRequest(req, res, () => route(req, res)).catch((err: unknown) => answerFailure(err, req, res, log));
  });
  applyServerLimits(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    drain() {
      shuttingDown = true;
    },
    close: (graceMs = 10_000) => closeServer(server, { graceMs, protocols, controllers, state: options.state, inFlight: () => inFlight, onIdle: (resolve) => (idle = resolve), shutDown: () => (shuttingDown = true) }),
  };
}

const PARSE_FAILED = Symbol('parse failed');


function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return PARSE_FAILED;
  }
}

/** The answer to a request whose handling threw: the body limits' own statuses, else a 500 (logged). */
function answerFailure(err: unknown, req: IncomingMessage, res: ServerResponse, log: Logger): void {
  if (err instanceof BodyTooLargeError) {
    if (!res.headersSent) sendError(res, 413, 'FORGE_BODY_TOO_LARGE', err.message);
    req.resume();
    return;
  }
  if (err instanceof BodyTimeoutError) {
    // The connection goes too: a client that trickles its body gets no second chance on it.
    res.setHeader('connection', 'close');
    if (!res.headersSent) sendError(res, 408, 'FORGE_BODY_TIMEOUT', err.message, 'send the whole body without pausing');
    res.on('finish', () => req.socket.destroy());
    return;
  }
  if (err instanceof JsonTooDeepError) {
    if (!res.headersSent) sendError(res, 400, 'FORGE_JSON_TOO_DEEP', err.message, 'flatten the arguments');
    return;
  }
  log.warn(`request ${req.method} ${req.url} failed: ${(err as Error).stack ?? err}`);
  if (!res.headersSent) sendError(res, 500, 'FORGE_INTERNAL', 'the request failed inside the agent; see its log');
  else res.end();
}

interface ClosingState {
  graceMs: number;
  protocols: Promise<ProtocolEndpoints> | undefined;
  controllers: Set<AbortController>;
  state: AgentServerOptions['state'];
  inFlight(): number;
  /** Registers the callback the last in-flight request's end calls. */
  onIdle(resolve: () => void): void;
  shutDown(): void;
}

/** Stops accepting, waits for in-flight requests up to the grace period, fails the turns still running, then closes the rest. */
async function closeServer(server: Server, closing: ClosingState): Promise<void> {
  closing.shutDown();
  const loaded = closing.protocols ? await closing.protocols : undefined;
  loaded?.close();
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const settled = (ms: number) => Promise.race([new Promise<void>((resolve) => closing.onIdle(resolve)), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  if (closing.inFlight() > 0) await settled(closing.graceMs);
  // Turns still running past the grace period end failed — in the store too, so no task stays "working".
  const unfinished = loaded?.executor.runningTasks() ?? [];
  if (unfinished.length) {
    loaded!.executor.abortAll();
    if (closing.inFlight() > 0) await settled(2000);
    await Promise.allSettled(unfinished.map((id) => closing.state?.tasks.fail(id, 'the agent stopped before the task finished; send it again')));
  }
  for (const c of closing.controllers) c.abort();
  await loaded?.mcp.closeAll();
  server.closeAllConnections();
  await stopped;
}
