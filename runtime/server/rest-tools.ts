/**
 * REST for operators and scripts: GET /tools, GET /tools/:name,
 * POST /tools/:name with the arguments as a JSON object. The response body
 * is always the tool's result; the status says how it went.
 */
import type { ServerResponse } from 'node:http';
import type { ToolResult } from '../tools/model.ts';
import type { McpToolSource } from './mcp-server.ts';
import { sendError, sendJson } from './respond.ts';

const STATUS_BY_CODE: Record<string, number> = {
  FORGE_TOOL_UNKNOWN: 404,
  FORGE_TOOL_ARGS: 400,
  FORGE_TOOL_TIMEOUT: 504,
  FORGE_APPROVAL_DENIED: 403,
  FORGE_APPROVAL_REQUIRED: 403,
  FORGE_TOOL_CIRCUIT_OPEN: 503,
  FORGE_TOOL_CANCELLED: 499,
  FORGE_TOOL_UNAVAILABLE: 503,
};

export function listTools(res: ServerResponse, tools: McpToolSource): void {
  sendJson(res, 200, { tools: tools.list().map(({ name, description, category, tags, inputSchema }) => ({ name, description, category, tags, inputSchema })) });
}

export function describeTool(res: ServerResponse, tools: McpToolSource, name: string): void {
  const spec = tools.list().find((t) => t.name === name);
  if (!spec) return sendError(res, 404, 'FORGE_TOOL_UNKNOWN', `no tool named "${name}"`);
  sendJson(res, 200, spec);
}

export async function callTool(res: ServerResponse, tools: McpToolSource, name: string, body: Buffer, signal: AbortSignal): Promise<void> {
  let args: unknown = {};
  if (body.length) {
    try {
      args = JSON.parse(body.toString('utf8'));
    } catch (err) {
      return sendError(res, 400, 'FORGE_BAD_JSON', `the body is not valid JSON: ${(err as Error).message}`, 'send the arguments as a JSON object');
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return sendError(res, 400, 'FORGE_BAD_JSON', 'the arguments must be a JSON object');
  const result: ToolResult = await tools.execute(name, args, { signal, frontend: 'rest' });
  sendJson(res, result.ok ? 200 : (STATUS_BY_CODE[result.error.code] ?? 422), result);
}
