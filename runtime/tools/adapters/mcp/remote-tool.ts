/**
 * An MCP server's tool as a Forge tool spec: named `<server>__<tool>`,
 * category adapter, its description and input schema as the server gives
 * them, and a security tag from its annotations (a read-only tool is `read`;
 * anything else may change something, so `write`).
 */
import type { Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';
import type { JSONSchema, ToolSpec } from '../../model.ts';
import type { McpServerSettings } from '../settings.ts';
import { adapterToolName } from '../tool-name.ts';

export type { RemoteTool };

export function remoteToolSpec(server: McpServerSettings, tool: RemoteTool): ToolSpec {
  const description = tool.description?.trim() || tool.title || tool.annotations?.title || `Tool "${tool.name}" of MCP server "${server.name}".`;
  const spec: ToolSpec = {
    name: adapterToolName(server.name, tool.name),
    description,
    category: 'adapter',
    inputSchema: { ...(tool.inputSchema as JSONSchema), type: 'object' },
    tags: tool.annotations?.readOnlyHint ? ['read'] : ['write'],
    timeoutMs: server.timeout_ms,
    adapter: { kind: 'mcp', server: server.name, tool: tool.name },
  };
  if (tool.outputSchema) spec.outputSchema = tool.outputSchema as JSONSchema;
  return spec;
}
