/**
 * The tool model: what a tool declares about itself (ToolSpec, recorded in
 * agent.json) and what it does (Tool.execute). Every tool — builtin, adapter,
 * dev or custom — is one of these.
 */
import type { AdapterBinding } from './adapters/settings.ts';

import type { Approver } from '../guard/approver.ts';
import type { DiagnosticCode } from '../diagnostic-codes.ts';
import type { StopNotice } from './call-stop.ts';

export type Category = 'builtin' | 'adapter' | 'dev' | 'custom';
export const CATEGORIES: readonly Category[] = ['builtin', 'adapter', 'dev', 'custom'];

export { SECURITY_TAGS, type SecurityTag } from '../guard/security-tags.ts';

export type JSONSchema = Record<string, unknown>;

export type SourceKind = 'python' | 'typescript' | 'javascript' | 'yaml';

/**
 * How a custom tool's code is entered: `execute` tools define an
 * `execute(args)` function and are served by a long-lived worker; `script`
 * tools read JSON on stdin and write their result to stdout, one process per call.
 */
export type EntryStyle = 'execute' | 'script';

export interface ToolSource {
  kind: SourceKind;
  /** Relative to the project (sources) or to the bundle directory (agent.json). */
  path: string;
  sha256: string;
  style?: EntryStyle;
  /** Interpreters a YAML tool's steps run (the container must have them): python, bash, sh. */
  interpreters?: string[];
}

export interface ToolSpec {
  name: string;
  description: string;
  category: Category;
  inputSchema: JSONSchema;
  outputSchema?: JSONSchema;
  tags: string[];
  composedOf?: string[];
  singleConfirmation?: boolean;
  /** @asType integer */ timeoutMs?: number;
  source?: ToolSource;
  /** Per-tool settings from forge.yaml's `tools: [{ name, config }]`. */
  config?: Record<string, unknown>;
  /** An adapter tool's service and operation (an MCP server's tool, an OpenAPI operation). */
  adapter?: AdapterBinding;
}

export interface ToolError {
  code: DiagnosticCode;
  message: string;
  hint?: string;
  /** Extra detail for people debugging (stderr tail, traceback); not shown to models by default. */
  details?: string;
  /** A refusal that may pass if sent again this many seconds later (a busy queue, an open circuit): REST's Retry-After. */
  retryAfterSeconds?: number;
}

export type ToolResult =
  | { ok: true; value: unknown; durationMs?: number }
  | { ok: false; error: ToolError; durationMs?: number };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
}

export interface ExecuteOptions {
  timeoutMs?: number;
  /** The caller's stop: an AbortSignal, or a CallStop (call-stop.ts), which costs less to make. */
  signal?: StopNotice;
  /** Who confirms the calls the approval policy will not run on its own (this call and its sub-tool calls). */
  approver?: Approver;
  /**
   * A person asked for this very call (`forge tool run NAME`), so it needs no
   * further confirmation; its sub-tool calls still go through the policy.
   * Only honoured on a top-level call: a tool cannot approve its own sub-calls.
   */
  approved?: boolean;
  /** The conversation or MCP session the call comes from (`context:ID`, `mcp:ID`, `stdio`); sub-calls inherit it. */
  session?: string;
  /**
   * Session-tier forged tools the call may reach besides `session`'s own.
   * Absent (every front end): none. 'everything': the person running Forge
   * (`forge tool run`, the bundle's `call`), for the call and its sub-calls.
   * 'this-tool': forge_tool testing a candidate no session sees yet; the
   * candidate's own calls still reach only what `session` sees.
   */
  sees?: 'everything' | 'this-tool';
  /** The front end that made the call (mcp, rest, agent ...), for metrics and traces. */
  frontend?: string;
  /**
   * The caller counts and traces this call itself (the agent loop: it knows
   * the model's call id and the gate's decision, and counts refused calls
   * too), so the tool source must not count it again.
   */
  instrumented?: boolean;
}

/** What a tool sees of the registry: only the tools it declared in composedOf. */
export interface ToolRunner {
  execute(name: string, args: unknown, options?: ExecuteOptions): Promise<ToolResult>;
}

export interface ToolContext {
  registry: ToolRunner;
  workDir: string;
  /** A per-call temporary directory, created on first use and removed after the call. */
  readonly tmpDir: string;
  signal: AbortSignal;
  /** The call's stop as signal tells it, without making an AbortSignal (call-stop.ts). */
  readonly stop: StopNotice;
  depth: number;
  log: Logger;
  /** The conversation or MCP session the call comes from, when it has one. */
  session?: string;
}

export interface Tool extends ToolSpec {
  execute(args: unknown, ctx: ToolContext): Promise<ToolResult>;
  /** Releases long-lived resources (worker processes, connections). */
  close?(): Promise<void>;
  /** Whether the tool can serve calls (a worker that keeps dying cannot); /readyz reports it. */
  health?(): ToolHealth;
}

export interface ToolHealth {
  healthy: boolean;
  detail?: string;
  /** A failing tool's circuit: open (calls refused) or half-open (one trial call allowed). */
  circuit?: 'open' | 'half-open';
}

export function ok(value: unknown): ToolResult {
  return { ok: true, value };
}

export function fail(code: DiagnosticCode, message: string, hint?: string, details?: string): ToolResult {
  const error: ToolError = { code, message };
  if (hint) error.hint = hint;
  if (details) error.details = details;
  return { ok: false, error };
}

/** The ToolSpec part of a Tool, as agent.json records it (no functions, no undefined fields). */
export function toSpec(tool: ToolSpec): ToolSpec {
  const spec: ToolSpec = {
    name: tool.name,
    description: tool.description,
    category: tool.category,
    inputSchema: tool.inputSchema,
    tags: [...tool.tags],
  };
  if (tool.outputSchema) spec.outputSchema = tool.outputSchema;
  if (tool.composedOf?.length) spec.composedOf = [...tool.composedOf];
  if (tool.singleConfirmation) spec.singleConfirmation = true;
  if (tool.timeoutMs !== undefined) spec.timeoutMs = tool.timeoutMs;
  if (tool.source) spec.source = { ...tool.source };
  if (tool.config && Object.keys(tool.config).length > 0) spec.config = tool.config;
  if (tool.adapter) spec.adapter = tool.adapter;
  return spec;
}
