/**
 * The tools' side of MCP, with no SDK in it: what tools/list and tools/call
 * answer. The SDK's Server (stdio, sessions) and the stateless HTTP handler
 * (mcp-direct.ts) both answer with these, so they cannot drift. A failing
 * tool is an error result, never a protocol error.
 */
import type { JSONSchema, ToolRunner, ToolSpec } from '../tools/model.ts';
import { checkedOutputSchema } from '../tools/local-schema.ts';
import { compileResultSchema, describeArgumentError } from '../tools/validation.ts';
import { toolAnnotations } from './tool-annotations.ts';

export interface McpToolSource extends ToolRunner {
  list(): ToolSpec[];
  /** One tool's spec (for its outputSchema); falls back to searching list(). */
  get?(name: string): ToolSpec | undefined;
  /** Like get, and looks further for a tool not registered in this process (forged on another replica). */
  resolve?(name: string): Promise<ToolSpec | undefined>;
  /** Subscribes to changes of the tool set (returns the unsubscribe); absent where the set never changes. */
  onToolsChanged?(listener: () => void): () => void;
}

/**
 * Tool calls one MCP client runs at once: a stateless batch (one request holding one connection,
 * mcp-direct.ts), a stateful session or a stdio client (mcp-server.ts). Without it one batch of 100
 * calls ran all of them together, so the connection cap (1024) let clients run a hundred times as
 * many tool calls at once as connections, each reading files, fetching, holding memory. Past this
 * many, calls wait their turn.
 */
export const MCP_CALLS_AT_ONCE = 8;

export interface CallToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What is wrong with tools/call params, as a -32602 message; undefined when they can be called with. */
export function callParamsError(params: { name?: unknown; arguments?: unknown }): string | undefined {
  if (typeof params.name !== 'string') return 'Invalid params: tools/call needs a tool name';
  const args = params.arguments ?? {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return 'Invalid params: arguments must be an object';
  return undefined;
}

export function listToolsResult(tools: McpToolSource) {
  const listed = tools.list();
  const byName = new Map(listed.map((t) => [t.name, t]));
  // A composed tool's steps may be tools this session does not list (none today): then they count as run.
  const lookup = (name: string) => byName.get(name) ?? tools.get?.(name);
  const reached = new Map();
  return { tools: listed.map((spec) => mcpToolEntry(spec, lookup, reached)) };
}

export async function callToolResult(tools: McpToolSource, name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
  const result = await tools.execute(name, args, { signal, frontend: 'mcp' });
  if (!result.ok) {
    const { code, message, hint } = result.error;
    return { isError: true, content: [{ type: 'text', text: `${code}: ${message}${hint ? `\nhint: ${hint}` : ''}` }] };
  }
  const value = result.value;
  const mismatch = outputMismatch(tools.get?.(name) ?? tools.list().find((t) => t.name === name), value);
  if (mismatch) return { isError: true, content: [{ type: 'text', text: `FORGE_TOOL_OUTPUT: ${mismatch}` }] };
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
  return { content: [{ type: 'text', text }], ...structured };
}

/**
 * One tool as tools/list sends it. outputSchema only when it describes an
 * object (MCP requires structuredContent to be one): a client checks
 * structuredContent against it.
 */
export function mcpToolEntry(spec: ToolSpec, lookup?: (name: string) => ToolSpec | undefined, reached?: Parameters<typeof toolAnnotations>[2]) {
  const output = spec.outputSchema as { type?: unknown } | undefined;
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as { type: 'object' },
    ...(output?.type === 'object' ? { outputSchema: output as { type: 'object' } } : {}),
    annotations: toolAnnotations(spec, lookup, reached),
  };
}

/**
 * MCP clients check structuredContent against the outputSchema tools/list
 * sent (the SDK client rejects a result that does not match), so a result
 * that breaks the tool's declared output is an error result naming why.
 */
function outputMismatch(spec: ToolSpec | undefined, value: unknown): string | undefined {
  if (!spec?.outputSchema || (spec.outputSchema as { type?: unknown }).type !== 'object') return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `tool "${spec.name}" declares an object output, and returned ${Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`}`;
  // As the registry checks it: an adapter's schema without the patterns only the backtracking engine runs.
  const schema = checkedOutputSchema(spec) as JSONSchema;
  let validate;
  try {
    validate = compileResultSchema(schema);
  } catch {
    return undefined; // a schema this validator cannot read is the client's to check
  }
  if (validate(value)) return undefined;
  return `the result of "${spec.name}" does not match its declared output: ${(validate.errors ?? []).map((e) => describeArgumentError(e)).join('; ')}`;
}
