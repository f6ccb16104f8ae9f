/**
 * The resolved project configuration: forge.yaml after validation, with
 * defaults applied and every path made absolute. Stages and commands take
 * this, never the raw YAML.
 */
import type { Location } from '../../runtime/diagnostics.ts';
import type { ApprovalSettings, EgressSettings, ModelSettings, RuntimeSettings } from '../../runtime/manifest.ts';
import type { SandboxSettings } from '../../runtime/exec/tool-sandbox.ts';
import type { ScheduledTask } from '../../runtime/scheduler/scheduled-task.ts';
import type { ApiConfig, McpServerConfig } from './adapter-config.ts';
import type { YamlSource } from './yaml-source.ts';

export interface ToolEntry {
  name: string;
  config?: Record<string, unknown>;
  at: Location;
  /** Where a part of `config` is written (a field's value, or its key): messages about the config point there, not at the name. */
  configAt?: (path: readonly (string | number)[], target?: 'value' | 'key') => Location;
}

export interface ToolDir {
  /** As written in forge.yaml. */
  path: string;
  absolute: string;
  at: Location;
  /** Listed in forge.yaml (a missing one is worth a warning), rather than the default. */
  explicit: boolean;
}

export interface ProjectConfig {
  /** Absolute path of forge.yaml. */
  file: string;
  /** forge.yaml as it should be named in messages (relative to the current directory). */
  displayFile: string;
  /** The project root: the directory holding forge.yaml. */
  root: string;
  agentId: string;
  version: string;
  description: string;
  model?: ModelSettings;
  workDir: string;
  /** forge.yaml's `workdir:` as written (relative to the project root, or absolute); agent.json carries it. */
  workDirSetting: string;
  /** forge.yaml's `sandbox:` (mode and per-tool memory/CPU/network). */
  sandbox: SandboxSettings;
  toolDirs: ToolDir[];
  /** forge.yaml's `ignore:`: gitignore-style patterns of tool-dir files that are neither tools nor shipped. */
  ignore: string[];
  /** forge.yaml's `not_secrets:`: patterns (as `ignore:`) of files that look like secrets and ship on purpose. */
  notSecrets: string[];
  tools: ToolEntry[];
  envPassthrough: string[];
  egress: EgressSettings;
  approval: ApprovalSettings;
  server: { port: number; host: string };
  /** forge.yaml `metrics:`: whether /metrics needs the bearer token. */
  metrics: 'private' | 'public';
  /** The Node.js line and base image of the bundle's container (forge.yaml's `runtime:`). */
  runtime: RuntimeSettings;
  /** Recurring tasks declared in forge.yaml (source "config": read-only at run time). */
  schedules: ScheduledTask[];
  /** forge.yaml's `state:` (file: or a postgres:// URL without password); absent: file:. */
  state?: string;
  /** forge.yaml's `mcp.servers` and `apis`: services whose tools are adapter tools. */
  mcpServers: McpServerConfig[];
  apis: ApiConfig[];
  /** forge.yaml's `emergent:` (forge_tool's settings; `true` is {}); absent when agents may not forge tools. */
  emergent?: Record<string, unknown>;
  /** A tool result that does not match its declared Output fails the call (default: a logged warning). */
  strictOutputs: boolean;
  source: YamlSource;
}
