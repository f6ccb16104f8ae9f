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
import { createAjv, describeArgumentError } from '../tools/validation.ts';
import type { JSONSchema } from '../tools/model.ts';
import { toolAnnotations } from './tool-annotations.ts';

export interface McpToolSource extends ToolRunner {
  list(): ToolSpec[];
  /** One tool's spec (for its outputSchema); falls back to searching list(). */
  get?(name: string): ToolSpec | undefined;
  /** Subscribes to changes of the tool set (returns the unsubscribe); absent where the set never changes. */
  onToolsChanged?(listener: () => void): () => void;
}

export function createMcpServer(identity: { name: string; version: string }, tools: McpToolSource): Server {
  const server = new Server({ name: identity.name, version: identity.version }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.list().map(mcpToolEntry) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await tools.execute(request.params.name, request.params.arguments ?? {}, { signal: extra.signal, frontend: 'mcp' });
    if (!result.ok) {
      const { code, message, hint } = result.error;
      return { isError: true, content: [{ type: 'text' as const, text: `${code}: ${message}${hint ? `\nhint: ${hint}` : ''}` }] };
    }
    const value = result.value;
    const mismatch = outputMismatch(tools.get?.(request.params.name) ?? tools.list().find((t) => t.name === request.params.name), value);
    if (mismatch) return { isError: true, content: [{ type: 'text' as const, text: `FORGE_TOOL_OUTPUT: ${mismatch}` }] };
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
    return { content: [{ type: 'text' as const, text }], ...structured };
  });
  // A client is told when the tool set changes (hot reload, a forged tool) and lists again.
  const unsubscribe = tools.onToolsChanged?.(() => {
    if (server.transport) void server.sendToolListChanged().catch(() => {});
  });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    unsubscribe?.();
    previousOnClose?.();
  };
  return server;
}

/**
 * One tool as tools/list sends it. outputSchema only when it describes an
 * object (MCP requires structuredContent to be one): a client checks
 * structuredContent against it.
 */
export function mcpToolEntry(spec: ToolSpec) {
  const output = spec.outputSchema as { type?: unknown } | undefined;
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as { type: 'object' },
    ...(output?.type === 'object' ? { outputSchema: output as { type: 'object' } } : {}),
    annotations: toolAnnotations(spec),
  };
}

/** Its own validator: the arguments' one fills in defaults, which must not change a result. */
let outputAjv: ReturnType<typeof createAjv> | undefined;
const outputValidators = new WeakMap<object, ReturnType<ReturnType<typeof createAjv>['compile']>>();

/**
 * MCP clients check structuredContent against the outputSchema tools/list
 * sent (the SDK client rejects a result that does not match), so a result
 * that breaks the tool's declared output is an error result naming why.
 */
function outputMismatch(spec: ToolSpec | undefined, value: unknown): string | undefined {
  const schema = spec?.outputSchema as (JSONSchema & { type?: unknown }) | undefined;
  if (!schema || schema.type !== 'object') return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `tool "${spec!.name}" declares an object output, and returned ${Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`}`;
  let validate = outputValidators.get(schema);
  if (!validate) {
    const { $schema: _dialect, ...rest } = schema;
    try {
      validate = (outputAjv ??= createAjv()).compile(rest);
    } catch {
      return undefined; // a schema this validator cannot read is the client's to check
    }
    outputValidators.set(schema, validate);
  }
  if (validate(value)) return undefined;
  return `the result of "${spec!.name}" does not match its declared output: ${(validate.errors ?? []).map(describeArgumentError).join('; ')}`;
}
