/**
 * How a tool shipped with Forge is written: its spec (category declared here,
 * by the tool itself), an optional JSON Schema for its forge.yaml `config:`,
 * and a factory that makes the running tool from that config.
 */
import { HttpClient } from '../../net/http-client.ts';
import type { ScheduledTask } from '../../scheduler/scheduled-task.ts';
import type { AgentIntrospection } from '../call-log.ts';
import type { Logger, Tool, ToolSpec } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import { compileSchema } from '../validation.ts';

import type { ModelProvider } from '../../agent/messages.ts';
import type { ModelSettings } from '../../manifest.ts';

export interface BuiltinHost<Config> {
  /** The tool's `config:` from forge.yaml, with its schema's defaults filled in. */
  config: Config;
  /** The directory file tools are confined to. */
  workDir: string;
  log: Logger;
  /** The runtime's HTTP client: every outbound request goes through it (and its egress policy). */
  http: HttpClient;
  /** The runtime's environment (API keys are read from here, never from config). */
  env: NodeJS.ProcessEnv;
  /** The running agent, for tools that inspect it (debug_console). */
  agent?: AgentIntrospection;
  /** The schedules declared in forge.yaml (read-only to the schedule tools). */
  schedules?: readonly ScheduledTask[];
  /** The registry the tool is in, for tools that add tools to it (forge_tool). */
  registry?: ToolRegistry;
  /** A client for a model, made by the runtime's assembly (forge_tool's model judge): tools never import the agent's providers. */
  modelClient?: (model: ModelSettings) => Promise<ModelProvider>;
}

export interface ToolEndpoint {
  url: string;
  /** Written in forge.yaml (so a private address in it is explicitly allowed), not a default of the tool. */
  explicit: boolean;
  /** The config key that names it, for messages ("webhooks.deploy"). */
  key?: string;
}

export interface BuiltinDefinition<Config = Record<string, unknown>> {
  spec: Omit<ToolSpec, 'config' | 'source'>;
  /** Validates forge.yaml's `config:` for this tool at build time. */
  configSchema?: Record<string, unknown>;
  /** What the tool's config changes in its spec (e.g. webhook_call's pinned names as an enum); applied by the build. */
  specFor?(config: Partial<Config>): Partial<Pick<ToolSpec, 'description' | 'inputSchema' | 'timeoutMs'>>;
  /** The endpoints the tool will reach with this config, for the build to add to the egress allowlist. */
  endpoints?(config: Partial<Config>): ToolEndpoint[];
  create(host: BuiltinHost<Config>): Pick<Tool, 'execute'> & Partial<Pick<Tool, 'close'>>;
  /** Reference text `forge tool describe` shows after the description (too long for the model to read on every call). */
  guide?(): string;
}

export function defineBuiltin<Config = Record<string, unknown>>(definition: BuiltinDefinition<Config>): BuiltinDefinition<Config> {
  return definition;
}

/** The running tool for a definition and its config. */
export function instantiateBuiltin(definition: BuiltinDefinition<any>, spec: ToolSpec, host: Omit<BuiltinHost<unknown>, 'config'>): Tool {
  const config = structuredClone(spec.config ?? {}) as Record<string, unknown>;
  // A tool enabled without `config:` still gets its schema's defaults.
  if (definition.configSchema) {
    const validate = compileSchema(definition.configSchema);
    if (!validate(config)) throw new Error(`tool "${spec.name}" has an invalid config: ${(validate.errors ?? []).map((e) => `${e.instancePath || 'config'} ${e.message}`).join('; ')}`);
  }
  const made = definition.create({ ...host, config });
  return { ...spec, execute: made.execute, ...(made.close ? { close: made.close } : {}) };
}
