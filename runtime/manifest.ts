/**
 * agent.json: what the build knows about the agent, and all the runtime
 * needs to serve it. schemas/agent.schema.json describes the same shape: it
 * is generated from AgentManifest and the types it references (`npm run
 * schemas:agent`; test/stages/agent-schema.test.ts fails when it is stale),
 * so their doc comments are the schema's descriptions.
 */
import type { ApiSettings, McpServerSettings } from './tools/adapters/settings.ts';
import type { Category, ToolSpec } from './tools/model.ts';
import type { SandboxSettings } from './exec/tool-sandbox.ts';

export const TOOL_INTERFACE_VERSION = 1;

export interface ModelRef {
  provider: 'openai' | 'anthropic';
  name: string;
  base_url?: string;
  api_key_env?: string;
  /** Mark requests for the provider's prompt cache where it must be asked for (Anthropic); default true. */
  prompt_cache?: boolean;
  /** Fields added to every request to this model (reasoning_effort, thinking...): settings Forge has no name for. */
  extra_body?: Record<string, unknown>;
}

export interface ModelSettings extends ModelRef {
  fallbacks?: ModelRef[];
  /** @asType integer */ max_tokens?: number;
  temperature?: number;
  /**
   * Most model turns in one task before the agent stops.
   * @asType integer
   */
  max_iterations?: number;
}

/**
 * A TCP port.
 * @asType integer
 */
type Port = number;

export interface EgressSettings {
  mode: 'deny-all' | 'allowlist' | 'open';
  allowed_domains: string[];
  /** Non-public addresses (or CIDR ranges) that may be reached: loopback test servers, a private service. */
  allowed_addresses?: string[];
  /**
   * TCP ports other than 80 and 443 of the public endpoints the build found
   * (a model gateway on :8443), for k8s/networkpolicy.yaml; the runtime's
   * policy does not read it (allowed_domains' host:port entries limit ports).
   */
  endpoint_ports?: Port[];
}

export interface ApprovalSettings {
  auto_approve: string[];
  auto_deny: string[];
  /** 'policy': REST and MCP callers go through the rules too (default 'approved': the tool they name counts as approved). */
  clients?: 'approved' | 'policy';
}

/** A recurring task declared in forge.yaml. */
export interface ScheduleSettings {
  id: string;
  cron: string;
  task: string;
  timezone?: string;
}

/** The manifest a Forge build writes (agent.json): the agent's identity, model, every tool's spec, egress, approval and the settings the runtime serves it with. */
export interface AgentManifest {
  /** @asType integer */ tool_interface_version: number;
  agent_id: string;
  version: string;
  description: string;
  model?: ModelSettings;
  tools: ToolSpec[];
  categories: Record<Category, string[]>;
  egress: EgressSettings;
  approval: ApprovalSettings;
  /** MCP servers whose tools are adapter tools (`<server>__<tool>`). */
  mcp?: { servers: McpServerSettings[] };
  /** OpenAPI services whose operations are adapter tools (`<api>__<operationId>`). */
  apis?: ApiSettings[];
  /** Environment variables the agent's tools may read from the runtime's environment. */
  env_passthrough: string[];
  /** forge.yaml's strict_outputs: results must match their tool's declared Output. */
  strict_outputs?: boolean;
  requirements: { node: string; python?: string };
  /** The container's Node.js line and base image (forge.yaml's `runtime:`). */
  runtime?: RuntimeSettings;
  /** Third-party Python packages the tools declare (PEP 723 blocks, requirements.txt): installed into a venv by the Dockerfile and forge package. */
  python?: PythonDependencies;
  /** Where the agent listens by default (flags and PORT override it). */
  server: { host: string; port: Port };
  /** forge.yaml `metrics: public`: /metrics without the bearer token (absent = private). */
  metrics?: 'public';
  /** Recurring tasks from forge.yaml (absent when there are none). */
  schedules?: ScheduleSettings[];
  /** forge.yaml's `state:` (FORGE_STATE_URL overrides it); absent: file:. */
  state?: string;
  build: { mode: 'prod' | 'dev'; forge_version: string };
  /** forge.yaml's `emergent:`: the agent may forge tools (forge_tool's settings). */
  emergent?: Record<string, unknown>;
  /** forge.yaml's `workdir:` (relative to where the bundle is run; --workdir and FORGE_WORKDIR override it). */
  workdir?: string;
  /** The tool process sandbox: mode and memory/CPU/network, as defaults and per tool. */
  sandbox?: SandboxSettings;
}

export interface RuntimeSettings {
  /**
   * The Node.js major line the container runs.
   * @asType integer
   */
  node: number;
  /** The base image reference; a `@sha256:` digest pins it. */
  image: string;
}

export interface PythonDependencies {
  /** PEP 508 requirement strings, sorted and without duplicates. */
  dependencies: string[];
  /** Where each came from (tools/x.py, requirements.txt), for messages. */
  declared_in: Record<string, string[]>;
}
