/**
 * The agent's tools as an MCP server on stdin/stdout, for desktop MCP
 * clients (no LLM key needed). stdout carries only the protocol; logs go to
 * stderr. When stdin closes, the calls still running are finished and
 * their answers written before the server closes: a client that sends its
 * last requests and closes its end still gets every answer.
 */
import { StdioServerTransport } from '../vendor/mcp.ts';
import type { AgentManifest } from '../manifest.ts';
import { createMcpServer, type McpToolSource } from './mcp-server.ts';

export async function serveMcpStdio(manifest: AgentManifest, tools: McpToolSource, onClose: () => Promise<void>): Promise<void> {
  const running = new Set<Promise<unknown>>();
  const tracked: McpToolSource = {
    ...tools,
    execute: (name, args, options) => {
      const call = tools.execute(name, args, options);
      running.add(call);
      void call.finally(() => running.delete(call)).catch(() => {});
      return call;
    },
  };
  const server = createMcpServer({ name: manifest.agent_id, version: manifest.version }, tracked);
  const transport = new StdioServerTransport();
  transport.onclose = () => void onClose().then(() => process.exit(0));
  process.stdin.on('end', () => {
    void (async () => {
      // Requests already read are dispatched on this tick's data events; then wait for every call to answer.
      await new Promise((resolve) => setImmediate(resolve));
      while (running.size) await Promise.allSettled([...running]);
      // The answer is written after the call's promise settles: let it go out first.
      await new Promise((resolve) => setImmediate(resolve));
      await server.close();
    })();
  });
  await server.connect(transport);
  answerUnreadableLines(transport);
}

/**
 * The SDK's stdio transport reports a line it cannot read to onerror and
 * answers nothing, so a client waiting on that request waits for ever.
 * JSON-RPC answers it with id null: -32700 for text that is not JSON,
 * -32600 for JSON that is no request (null, a batch: MCP has none).
 */
function answerUnreadableLines(transport: StdioServerTransport): void {
  const reported = transport.onerror;
  transport.onerror = (error: Error) => {
    const parse = error instanceof SyntaxError;
    if (parse || error.name === 'ZodError') {
      const answer = { jsonrpc: '2.0', id: null, error: parse ? { code: -32700, message: `Parse error: ${error.message}` } : { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request or notification (MCP has no batches)' } };
      void transport.send(answer as never).catch(() => {});
    }
    reported?.(error);
  };
}
