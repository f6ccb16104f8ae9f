/**
 * The agent's tools as an MCP server on stdin/stdout, for desktop MCP
 * clients (no LLM key needed). stdout carries only the protocol; logs go to
 * stderr.
 */
import { StdioServerTransport } from '../vendor/protocol.ts';
import type { AgentManifest } from '../manifest.ts';
import { createMcpServer, type McpToolSource } from './mcp-server.ts';

export async function serveMcpStdio(manifest: AgentManifest, tools: McpToolSource, onClose: () => Promise<void>): Promise<void> {
  const server = createMcpServer({ name: manifest.agent_id, version: manifest.version }, tools);
  const transport = new StdioServerTransport();
  transport.onclose = () => void onClose().then(() => process.exit(0));
  process.stdin.on('end', () => void server.close());
  await server.connect(transport);
}
