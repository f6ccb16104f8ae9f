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
import { DefaultRequestHandler, InMemoryTaskStore } from '../vendor/protocol.ts';
import type { Agent } from '../agent/agent.ts';
import type { AgentManifest } from '../manifest.ts';
import type { Logger } from '../tools/model.ts';
import { agentCardJson, buildAgentCard, legacyAgentCard } from './a2a/agent-card.ts';
import { ForgeAgentExecutor } from './a2a/executor.ts';
import { createA2AJsonRpcHandler } from './a2a/json-rpc.ts';
import { isAuthorized, type AuthSettings } from './auth.ts';
import type { StateStore } from '../state/store.ts';
import { McpHttpEndpoint } from './mcp-http.ts';
import { McpStatelessEndpoint, type McpEndpoint } from './mcp-stateless.ts';
import { serveStoredFile } from './stored-files.ts';
import { createMcpServer, type McpToolSource } from './mcp-server.ts';
import { BodyTimeoutError, BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readBody } from './request-body.ts';
import { applyServerLimits, decodePathSegment, httpLimits, jsonNestsDeeperThan, serverOptions, type HttpLimits } from './http-limits.ts';
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
  /** Runs A2A tasks (its turns are aborted and failed when the grace period ends). */
  executor: ForgeAgentExecutor;
}

const SEND_METHODS = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

export async function startAgentServer(options: AgentServerOptions): Promise<RunningServer> {
  const { manifest, tools, agent, auth, log } = options;
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limits = httpLimits(options.limits);
  const bodyOf = async (req: IncomingMessage): Promise<Buffer> => {
    const body = await readBody(req, limit, { idleTimeoutMs: limits.bodyIdleTimeoutMs, totalTimeoutMs: limits.bodyTimeoutMs });
    if (jsonNestsDeeperThan(body, limits.maxJsonDepth)) throw new JsonTooDeep();
    return body;
  };
  const mcpIdentity = { name: manifest.agent_id, version: manifest.version };
  const makeMcpServer = () => createMcpServer(mcpIdentity, tools);
  const mcp: McpEndpoint = options.mcpSessions ? new McpHttpEndpoint(makeMcpServer) : new McpStatelessEndpoint(makeMcpServer, tools.onToolsChanged?.bind(tools));
  const authRequired = auth.token !== undefined;
  const cardFor = (req: IncomingMessage) => buildAgentCard(manifest, options.publicUrl ?? `http://${req.headers.host ?? `${options.host}:${options.port}`}`, authRequired);
  const executor = new ForgeAgentExecutor(agent, options.state?.tasks);
  const requestHandler = new DefaultRequestHandler(buildAgentCard(manifest, options.publicUrl ?? `http://${options.host}:${options.port}`, authRequired), options.state?.tasks ?? new InMemoryTaskStore(), executor);
  const stopCancels = options.state ? forwardCancels(requestHandler, options.state, executor) : undefined;
  const jsonRpc = createA2AJsonRpcHandler(requestHandler, (method) =>
    SEND_METHODS.has(method) && !agent.hasModel ? { code: -32004, message: 'no model configured: add a `model:` section (provider and name) to forge.yaml; tools are still served over MCP and REST' } : undefined,
  );

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
      return sendJson(res, 200, legacy ? legacyAgentCard(cardFor(req)) : agentCardJson(cardFor(req)), { vary: 'A2A-Version' });
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
      return mcp.handle(req, res, body);
    }
    if ((path === '/a2a' || path === '/') && method === 'POST') return jsonRpc(req, res, await bodyOf(req));
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
    traceRequest(req, res, () => route(req, res)).catch((err: unknown) => {
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
      if (err instanceof JsonTooDeep) {
        if (!res.headersSent) sendError(res, 400, 'FORGE_JSON_TOO_DEEP', `the JSON body nests deeper than ${limits.maxJsonDepth} levels`, 'flatten the arguments');
        return;
      }
      log.warn(`request ${req.method} ${req.url} failed: ${(err as Error).stack ?? err}`);
      if (!res.headersSent) sendError(res, 500, 'FORGE_INTERNAL', 'the request failed inside the agent; see its log');
      else res.end();
    });
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
    executor,
    drain() {
      shuttingDown = true;
    },
    async close(graceMs = 10_000) {
      shuttingDown = true;
      stopCancels?.();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((resolve) => (idle = resolve)), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      }
      // Turns still running past the grace period end failed — in the store too, so no task stays "working".
      const unfinished = executor.runningTasks();
      if (unfinished.length) {
        executor.abortAll();
        if (inFlight > 0) await Promise.race([new Promise<void>((resolve) => (idle = resolve)), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
        await Promise.allSettled(unfinished.map((id) => options.state?.tasks.fail(id, 'the agent stopped before the task finished; send it again')));
      }
      for (const c of controllers) c.abort();
      await mcp.closeAll();
      server.closeAllConnections();
      await stopped;
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

const PARSE_FAILED = Symbol('parse failed');

class JsonTooDeep extends Error {}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return PARSE_FAILED;
  }
}
