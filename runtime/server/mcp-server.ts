/**
 * The agent's tools as an MCP server (the official SDK's low-level Server,
 * so tool schemas go out exactly as agent.json records them). The same
 * server object serves Streamable HTTP and stdio: transports are separate
 * from protocol logic. A failing tool is an error result, never a protocol
 * error.
 */
import { Server } from '../vendor/protocol.ts';
import { CallToolRequestSchema, ListToolsRequestSchema } from '../vendor/protocol.ts';
import type { ToolRunner, ToolSpec } from '../tools/model.ts';
import { toolAnnotations } from './tool-annotations.ts';

export interface McpToolSource extends ToolRunner {
  list(): ToolSpec[];
}

export function createMcpServer(identity: { name: string; version: string }, tools: McpToolSource): Server {
  const server = new Server({ name: identity.name, version: identity.version }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.list().map((spec) => ({
      name: spec.name,
      description: spec.description,
      inputSchema: spec.inputSchema as { type: 'object' },
      annotations: toolAnnotations(spec),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await tools.execute(request.params.name, request.params.arguments ?? {}, { signal: extra.signal, frontend: 'mcp' });
    if (!result.ok) {
      const { code, message, hint } = result.error;
      return { isError: true, content: [{ type: 'text' as const, text: `${code}: ${message}${hint ? `\nhint: ${hint}` : ''}` }] };
    }
    const value = result.value;
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
    return { content: [{ type: 'text' as const, text }], ...structured };
  });
  return server;
}
