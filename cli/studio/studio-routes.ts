/**
 * The studio of `forge run --dev`, at /studio: the page and its assets
 * (no token needed: they hold no secret), and its API under /studio/api
 * (the bearer token, like every other endpoint): the live feed of spans
 * and tool changes, and the chat. Tools are listed and run through the
 * server's own REST endpoints (/tools).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from '../../runtime/agent/agent.ts';
import { isAuthorized, refuseUnauthorized } from '../../runtime/server/auth.ts';
import type { ExtraRoutes } from '../../runtime/server/observability-routes.ts';
import { httpLimits } from '../../runtime/server/http-limits.ts';
import { readBody } from '../../runtime/server/request-body.ts';
import { sendError, sendJson } from '../../runtime/server/respond.ts';
import type { ToolRegistry } from '../../runtime/tools/registry.ts';
import { parseChatRequest, streamTurn } from './studio-chat.ts';
import { createStudioFeed } from './studio-feed.ts';
import { STUDIO_HEADERS, studioAsset, studioHtml } from './studio-page.ts';
import { transcriptItems, type TranscriptItem } from './studio-transcript.ts';

/** The conversation as stored, as the chat shows it (a page opened again shows it, and the approvals it waits for). */
async function history(agent: Agent | undefined, registry: ToolRegistry, contextId: string): Promise<TranscriptItem[]> {
  if (!agent?.hasModel || !/^[\w.-]{1,100}$/.test(contextId)) return [];
  return transcriptItems(await agent.conversation(contextId), (name) => registry.get(name)?.category);
}

export interface Studio {
  routes: ExtraRoutes;
  /** Connects the studio to the agent once the server has made it. */
  attach(agent: Agent, token: string | undefined): void;
  close(): void;
}

const MAX_CHAT_BODY = 256 * 1024;

export function createStudio(options: { agentId: string; registry: ToolRegistry }): Studio {
  const feed = createStudioFeed(options.registry);
  // The server's body deadlines (FORGE_HTTP_LIMITS): a chat body that stalls is a 408, as on /tools, /mcp and /a2a.
  const limits = httpLimits();
  let agent: Agent | undefined;
  let token: string | undefined;
  let attached = false;

  const api = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (!attached) return sendError(res, 503, 'FORGE_STARTING', 'the studio is starting; try again in a moment');
    if (!isAuthorized(req, { token })) return refuseUnauthorized(res, 'open the studio with the link `forge run --dev` prints');
    if (path === '/studio/api/events' && req.method === 'GET') return feed.subscribe(res);
    if (path === '/studio/api/info' && req.method === 'GET') return sendJson(res, 200, { agentId: options.agentId, model: agent?.hasModel ?? false });
    if (path === '/studio/api/history' && req.method === 'GET') return sendJson(res, 200, { items: await history(agent, options.registry, new URL(req.url ?? '', 'http://studio').searchParams.get('contextId') ?? '') });
    const kind = path === '/studio/api/chat' ? 'chat' : path === '/studio/api/approve' ? 'approve' : undefined;
    if (kind && req.method === 'POST') {
      if (!agent?.hasModel) return sendError(res, 409, 'FORGE_NO_MODEL', 'no model configured', 'add a `model:` section to forge.yaml to chat; tools can still be run');
      const request = parseChatRequest(await readBody(req, MAX_CHAT_BODY, { idleTimeoutMs: limits.bodyIdleTimeoutMs, totalTimeoutMs: limits.bodyTimeoutMs }), kind);
      if (typeof request === 'string') return sendError(res, 400, 'FORGE_BAD_REQUEST', request);
      if (kind === 'approve' && !(await agent.pending(request.contextId))) return sendError(res, 409, 'FORGE_NOT_WAITING', `conversation "${request.contextId}" is not waiting for an approval`);
      return streamTurn(res, agent, options.registry, request);
    }
    return sendError(res, 404, 'FORGE_NOT_FOUND', `nothing at ${req.method} ${path}`);
  };

  const routes: ExtraRoutes = async (req, res, path) => {
    if (path !== '/studio' && !path.startsWith('/studio/')) return false;
    if (path.startsWith('/studio/api/')) {
      await api(req, res, path);
      return true;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, 'FORGE_METHOD', `${req.method} is not allowed on ${path}`);
      return true;
    }
    if (path === '/studio') {
      const html = studioHtml(options.agentId);
      res.writeHead(200, { ...STUDIO_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
      res.end(req.method === 'HEAD' ? undefined : html);
      return true;
    }
    const asset = studioAsset(path.slice('/studio/'.length));
    if (!asset) {
      sendError(res, 404, 'FORGE_NOT_FOUND', `nothing at ${path}`, 'the studio is at /studio (run `npm install` in forge if its assets are missing)');
      return true;
    }
    res.writeHead(200, { ...STUDIO_HEADERS, 'content-type': asset.type, 'content-length': asset.body.length });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
    return true;
  };

  return {
    routes,
    attach(a, t) {
      agent = a;
      token = t;
      attached = true;
    },
    close: () => feed.close(),
  };
}
