/**
 * What the agent's HTTP server answers, path by path: health and readiness
 * and the agent card (open), then — behind the bearer token — MCP, A2A,
 * stored files and REST for tools. agent-server.ts owns the server itself
 * (listening, counting requests in flight, closing).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sandboxStatus } from '../exec/tool-sandbox.ts';
import { sessionView } from '../tools/emergent/session-view.ts';
import { agentCardJson, buildAgentCard, legacyAgentCard } from './a2a/agent-card.ts';
import type { AgentServerOptions } from './agent-server.ts';
import { isAuthorized, refuseUnauthorized } from './auth.ts';
import { browserRefusal, parseHost } from './browser-guard.ts';
import { decodePathSegment, JsonTooDeepError, jsonNestsDeeperThan, type HttpLimits } from './http-limits.ts';
import type { McpToolSource } from './mcp-server.ts';
import { serveObservabilityRoutes } from './observability-routes.ts';
import { requestPath } from './request-target.ts';
import type { ProtocolEndpoints } from './protocol-endpoints.ts';
import { DEFAULT_MAX_BODY_BYTES, readBody } from './request-body.ts';
import { sendError, sendFailure, sendJson } from './respond.ts';
import { callTool, describeTool, listTools } from './rest-tools.ts';
import { serveStoredFile } from './stored-files.ts';
import { CallStop } from '../tools/call-stop.ts';

const PARSE_FAILED = Symbol('parse failed');

export class AgentRoutes {
  /** /readyz answers 503 once set; everything else is still served. */
  shuttingDown = false;
  /** The calls in flight over REST, aborted when their client goes or the server closes. */
  readonly stops = new Set<CallStop>();
  /** A2A and MCP (and their SDKs), loaded on the first request that needs them (protocol-endpoints.ts). */
  protocols: Promise<ProtocolEndpoints> | undefined;
  /** REST (and MCP without sessions) has no session: it sees agent-tier forged tools; an MCP session sees its own too. */
  private readonly tools: McpToolSource;
  private readonly maxBodyBytes: number;

  constructor(
    private readonly options: AgentServerOptions,
    private readonly limits: HttpLimits,
  ) {
    this.tools = sessionView(options.tools, undefined);
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = requestPath(req.url);
    if (path === undefined) return sendError(res, 400, 'FORGE_BAD_PATH', `the request target ${JSON.stringify(req.url)} is not a URL path`);
    const method = req.method ?? 'GET';
    const refusal = browserRefusal(req, path, { open: this.options.auth.token === undefined, publicUrl: this.options.publicUrl });
    if (refusal) return sendFailure(res, path, refusal.status, refusal);

    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') return this.readiness(res);
    if (method === 'GET' && (path === '/.well-known/agent-card.json' || path === '/.well-known/agent.json')) return this.agentCard(req, res, path);

    const { auth, metricsPublic, extraRoutes } = this.options;
    if (await serveObservabilityRoutes(req, res, path, { auth, metricsPublic, extraRoutes })) return;
    if (!isAuthorized(req, auth)) return refuseUnauthorized(res, 'send "Authorization: Bearer <token>" (FORGE_AUTH_TOKEN, or the token file the agent names at start)');

    if (path === '/mcp') return this.mcp(req, res, method);
    if ((path === '/a2a' || path === '/') && method === 'POST') return (await this.protocol()).a2a(req, res, await this.bodyOf(req));
    if (path === '/tools' && method === 'GET') return listTools(res, this.tools);
    const filePath = /^\/files\/([^/]+)$/.exec(path);
    if (filePath && method === 'GET' && this.options.state) {
      const file = decodePathSegment(filePath[1]);
      if (file === undefined) return sendError(res, 400, 'FORGE_BAD_PATH', `the path ${path} has malformed percent-encoding`);
      return serveStoredFile(res, this.options.state.files, file);
    }
    const toolPath = /^\/tools\/([^/]+)$/.exec(path);
    if (toolPath) return this.tool(req, res, method, path, toolPath[1]);
    return sendError(res, 404, 'FORGE_NOT_FOUND', `nothing at ${method} ${path}`, 'endpoints: /healthz /readyz /.well-known/agent-card.json /a2a /mcp /tools');
  }

  private async readiness(res: ServerResponse): Promise<void> {
    if (this.shuttingDown) return sendJson(res, 503, { ready: false, reason: 'shutting down' });
    const notReady = await this.options.notReady?.();
    if (notReady) return sendJson(res, 503, { ready: false, reason: notReady });
    // Readiness is the server's: a failing tool is reported (its circuit refuses its calls), never the pod drained.
    const unhealthy = this.options.unhealthyTools?.() ?? [];
    const sandbox = sandboxStatus();
    return sendJson(res, 200, { ready: true, tools: this.tools.list().length, model: this.options.agent.hasModel, ...(unhealthy.length ? { unhealthy } : {}), ...(sandbox ? { sandbox } : {}) });
  }

  private async agentCard(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const { manifest, publicUrl, auth } = this.options;
    // The name the client reached the agent by, unless it is no host and port ("evil.example/x?"): the card sends
    // the client's calls, with its token, to the URL it names.
    // Else the address the connection came in on (the listening one may be 0.0.0.0, or port 0).
    const reached = req.headers.host === undefined ? undefined : parseHost(req.headers.host);
    const card = buildAgentCard(manifest, publicUrl ?? reached?.origin ?? localOrigin(req), auth.token !== undefined);
    const version = req.headers['a2a-version'] as string | undefined;
    const legacy = path === '/.well-known/agent.json' || !version || /^0\./.test(version);
    return sendJson(res, 200, legacy ? legacyAgentCard(card) : await agentCardJson(card), { vary: 'A2A-Version' });
  }

  private async mcp(req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
    const body = method === 'POST' ? parseJson(await this.bodyOf(req)) : undefined;
    if (body === PARSE_FAILED) return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } });
    return (await this.protocol()).mcp.handle(req, res, body);
  }

  /** /tools/NAME: GET describes the tool, POST calls it (aborted if the client goes away first). */
  private async tool(req: IncomingMessage, res: ServerResponse, method: string, path: string, segment: string): Promise<void> {
    const name = decodePathSegment(segment);
    if (name === undefined) return sendError(res, 400, 'FORGE_BAD_PATH', `the path ${path} has malformed percent-encoding`, 'encode tool names with encodeURIComponent');
    if (method === 'GET') return describeTool(res, this.tools, name);
    if (method !== 'POST') return sendError(res, 405, 'FORGE_METHOD', `${method} is not allowed on ${path}`, 'use GET to describe a tool or POST to call it');
    const stop = new CallStop();
    this.stops.add(stop);
    res.on('close', () => {
      if (!res.writableFinished) stop.abort();
      this.stops.delete(stop);
    });
    return callTool(res, this.tools, name, await this.bodyOf(req), stop, this.options.log);
  }

  /** A2A and MCP, made at the first call (or at start, agent-server.ts says when). */
  protocol(): Promise<ProtocolEndpoints> {
    const { manifest, agent, publicUrl, host, port, auth, mcpSessions, state, maxTurns, http, pushDelivery } = this.options;
    return (this.protocols ??= import('./protocol-endpoints.ts').then((m) =>
      m.createProtocolEndpoints({ manifest, tools: this.tools, sessionTools: (session) => sessionView(this.options.tools, session), agent, baseUrl: publicUrl ?? `http://${host}:${port}`, authRequired: auth.token !== undefined, mcpSessions, state, maxTurns, http, pushDelivery, log: this.options.log }),
    ));
  }

  private async bodyOf(req: IncomingMessage): Promise<Buffer> {
    const { limits } = this;
    const body = await readBody(req, this.maxBodyBytes, { idleTimeoutMs: limits.bodyIdleTimeoutMs, totalTimeoutMs: limits.bodyTimeoutMs });
    if (jsonNestsDeeperThan(body, limits.maxJsonDepth)) throw new JsonTooDeepError(limits.maxJsonDepth);
    return body;
  }
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return PARSE_FAILED;
  }
}

/** http://address:port of the connection's own end, as a URL writes it ([::1] in brackets). */
function localOrigin(req: IncomingMessage): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}
