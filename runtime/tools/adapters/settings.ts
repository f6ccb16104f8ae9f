/**
 * What agent.json records about the services adapter tools talk to, and how
 * each adapter tool is bound to its service. Secrets are never recorded:
 * headers, env values and auth name environment variables (`${TOKEN}`,
 * `token_env`) that are read when the agent runs.
 */

/** An MCP server whose tools are adapter tools. */
export interface McpServerSettings {
  /** ^[a-z][a-z0-9-]{0,30}$; its tools are named `<name>__<tool>`. */
  name: string;
  transport: 'stdio' | 'http';
  /** stdio: the program to start, its arguments, extra environment and working directory. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** http: the Streamable HTTP endpoint and headers to send (values may hold `${VAR}`). */
  url?: string;
  headers?: Record<string, string>;
  /**
   * Connecting, and each call.
   * @asType integer
   */
  timeout_ms: number;
  /** A required server that cannot be reached stops the agent's start-up; an optional one is skipped. */
  required: boolean;
  /** Globs over the server's tool names; deny wins. */
  tools?: { allow?: string[]; deny?: string[] };
  /** An `npx PACKAGE` server: the exact version the build pinned (see mcp/pinned-package.ts). */
  package?: { name: string; version: string; bin?: string; args: string[] };
}

export type ApiAuth =
  | { type: 'bearer'; token_env: string }
  | { type: 'api_key'; in: 'header' | 'query'; name: string; value_env: string }
  | { type: 'basic'; username_env: string; password_env: string };

export interface ApiSettings {
  name: string;
  /** The spec as forge.yaml names it (a file or URL); the build reads it, the runtime does not. */
  spec: string;
  /** Where calls go: forge.yaml's base_url, or the spec's first server. */
  base_url: string;
  auth?: ApiAuth;
  /** @asType integer */ timeout_ms: number;
  /** forge.yaml's globs over operationIds, as the build applied them: what the recorded operations were chosen by (the build's; the runtime reads none). */
  include?: string[];
  exclude?: string[];
}

export interface McpBinding {
  kind: 'mcp';
  server: string;
  /** The tool's name on the server (the forge name may differ: `<server>__<tool>`, sanitized). */
  tool: string;
}

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface OpenApiParameter {
  name: string;
  in: ParameterLocation;
  /** The argument that carries it (the name, or `<in>_<name>` when names clash). */
  arg: string;
  style?: string;
  explode?: boolean;
}

export interface OpenApiBody {
  contentType: string;
  required: boolean;
  /** The whole body is this one argument... */
  arg?: string;
  /** ...or these top-level arguments are the body object's properties. */
  properties?: string[];
}

export interface OpenApiBinding {
  kind: 'openapi';
  api: string;
  /** The operationId (or the one derived from method and path), which include/exclude match; the tool name may be sanitized. */
  operationId: string;
  method: string;
  /** The path template, e.g. /pet/{petId}. */
  path: string;
  parameters: OpenApiParameter[];
  body?: OpenApiBody;
}

export type AdapterBinding = McpBinding | OpenApiBinding;
