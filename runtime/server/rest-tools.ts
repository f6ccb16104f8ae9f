/**
 * REST for operators and scripts: GET /tools, GET /tools/:name,
 * POST /tools/:name with the arguments as a JSON object. The response body
 * is always the tool's result (an error's details stay in the server log);
 * the status says how it went.
 */
import type { ServerResponse } from 'node:http';
import type { Logger, ToolResult } from '../tools/model.ts';
import type { McpToolSource } from './mcp-server.ts';
import { sendError, sendJson } from './respond.ts';
import { unknownToolHint } from '../tools/unknown-tool.ts';
import { tracebackKind } from '../tools/traceback-kind.ts';
import type { StopNotice } from '../tools/call-stop.ts';

const STATUS_BY_CODE: Record<string, number> = {
  FORGE_TOOL_UNKNOWN: 404,
  FORGE_TOOL_ARGS: 400,
  FORGE_TOOL_TIMEOUT: 504,
  FORGE_APPROVAL_DENIED: 403,
  FORGE_APPROVAL_REQUIRED: 403,
  FORGE_TOOL_DENIED: 403,
  FORGE_TOOL_CANCELLED: 499,
  FORGE_TOOL_UNAVAILABLE: 503,
};

export function listTools(res: ServerResponse, tools: McpToolSource): void {
  sendJson(res, 200, { tools: tools.list().map(({ name, description, category, tags, inputSchema }) => ({ name, description, category, tags, inputSchema })) });
}

export function describeTool(res: ServerResponse, tools: McpToolSource, name: string): void {
  const listed = tools.list();
  const spec = listed.find((t) => t.name === name);
  // The hint a call to it gets (POST): the likely name, else the tools there are.
  if (!spec) return sendError(res, 404, 'FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, unknownToolHint(name, listed.map((t) => t.name)));
  sendJson(res, 200, spec);
}

/** The reason a REST call is aborted with when the server stops before it finished (its grace period ended). */
export const SERVER_STOPPING = Symbol('server stopping');

export async function callTool(res: ServerResponse, tools: McpToolSource, name: string, body: Buffer, signal: StopNotice, log: Logger): Promise<void> {
  let args: unknown = {};
  if (body.length) {
    try {
      args = JSON.parse(body.toString('utf8'));
    } catch (err) {
      return sendError(res, 400, 'FORGE_BAD_JSON', `the body is not valid JSON: ${(err as Error).message}`, 'send the arguments as a JSON object');
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return sendError(res, 400, 'FORGE_BAD_JSON', 'the arguments must be a JSON object');
  let result: ToolResult = await tools.execute(name, args, { signal, frontend: 'rest' });
  // Stopped by the server's own stop, not by its caller: said so, with when to send it again (any replica, or this one restarted).
  if (!result.ok && result.error.code === 'FORGE_TOOL_CANCELLED' && signal.reason === SERVER_STOPPING) {
    result = { ...result, error: { code: 'FORGE_TOOL_CANCELLED', message: `tool "${name}" was stopped: the agent is shutting down and the call did not finish within its grace period`, hint: 'send the call again', retryAfterSeconds: 1 } };
  }
  const retryAfter = result.ok ? undefined : result.error.retryAfterSeconds;
  // A refusal that may pass later (a full queue, an open circuit, the state store away) is the server's
  // state, shared by every caller: 503 with when to come back, not a 429 for this client.
  const status = result.ok ? 200 : retryAfter !== undefined ? 503 : (STATUS_BY_CODE[result.error.code] ?? 422);
  sendJson(res, status, withoutDetails(result, name, log), retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {});
}

/**
 * An error's details (a stack trace or traceback with the server's paths, a stderr tail) go to
 * the server log, not to the client: MCP and A2A leave them out too, and the code, message and
 * hint say what went wrong.
 */
function withoutDetails(result: ToolResult, name: string, log: Logger): ToolResult {
  if (result.ok || result.error.details === undefined) return result;
  const { details, ...error } = result.error;
  log.warn(`tool ${name} failed over REST (${error.code}): ${details}`);
  // Said where they went: a caller holding only the message knows where to look.
  const kept = tracebackKind(details) ?? 'details';
  return { ...result, error: { ...error, hint: error.hint ?? `the ${kept} ${kept === 'details' ? 'are' : 'is'} in the server's log` } };
}
