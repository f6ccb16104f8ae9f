/**
 * How a tool shipped with Forge is written: its spec (category declared here,
 * by the tool itself), an optional JSON Schema for its forge.yaml `config:`,
 * and a factory that makes the running tool from that config.
 *
 * The schemas are the source of truth: they are recorded in agent.json as
 * written, and the types of `execute`'s arguments and of the host's config
 * are derived from them (json-schema-to-ts, types only: nothing of it is in
 * the bundle), so a schema change the code does not follow fails tsc.
 */
import type { FromSchema, JSONSchema as SchemaLiteral } from 'json-schema-to-ts';
import type { HttpClient } from '../../net/http-client.ts';
import type { ScheduledTask } from '../../scheduler/scheduled-task.ts';
import type { AgentIntrospection } from '../call-log.ts';
import type { Logger, Tool, ToolContext, ToolResult, ToolSpec } from '../model.ts';
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

/** A schema written as a literal in a tool's source (an object schema, not `true`/`false`). */
export type SchemaObject = Exclude<SchemaLiteral, boolean>;

/**
 * The value a schema describes once ajv has validated it with `useDefaults`:
 * a property with a `default` is always present, so it is not optional here.
 */
export type ValidatedBy<Schema> =
  // While defineBuiltin infers its schema, tsc tries the bare constraint first; mapping every JSON Schema at once never ends.
  SchemaObject extends Schema ? unknown : Schema extends SchemaObject ? FromSchema<Schema, { keepDefaultedPropertiesOptional: false }> : never;

/** The running tool a definition makes: `execute` receives arguments already validated against inputSchema. */
export interface BuiltinTool<Args = unknown> {
  execute(args: Args, ctx: ToolContext): Promise<ToolResult>;
  close?(): Promise<void>;
}

export interface BuiltinDefinition<Config = Record<string, unknown>, Args = unknown> {
  spec: Omit<ToolSpec, 'config' | 'source'>;
  /** Validates forge.yaml's `config:` for this tool at build time. */
  configSchema?: Record<string, unknown>;
  /** What the tool's config changes in its spec (e.g. webhook_call's pinned names as an enum); applied by the build. */
  specFor?(config: Partial<Config>): Partial<Pick<ToolSpec, 'description' | 'inputSchema' | 'timeoutMs'>>;
  /** The endpoints the tool will reach with this config, for the build to add to the egress allowlist. */
  endpoints?(config: Partial<Config>): ToolEndpoint[];
  create(host: BuiltinHost<Config>): BuiltinTool<Args>;
  /** Reference text `forge tool describe` shows after the description (too long for the model to read on every call). */
  guide?(): string;
}

/** A tool without a `config:` schema takes no settings; what forge.yaml passes is an open object. */
type NoConfig = { type: 'object' };

/** A definition as written: its schemas are literals, and the argument and config types follow from them. */
export interface BuiltinSource<Input extends SchemaObject, ConfigSchema extends SchemaObject> extends Omit<BuiltinDefinition<ValidatedBy<ConfigSchema>, ValidatedBy<Input>>, 'spec' | 'configSchema'> {
  spec: Omit<ToolSpec, 'config' | 'source' | 'inputSchema'> & { inputSchema: Input };
  configSchema?: ConfigSchema;
}

/**
 * Declares a shipped tool. The `const` type parameters keep the schemas'
 * literal types (so they stay plain data, recorded in agent.json byte for
 * byte) while `execute(args)` and `host.config` are typed from them.
 */
export function defineBuiltin<const Input extends SchemaObject, const ConfigSchema extends SchemaObject = NoConfig>(
  definition: BuiltinSource<Input, ConfigSchema>,
): BuiltinDefinition<ValidatedBy<ConfigSchema>, ValidatedBy<Input>> {
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
  // The registry is what calls execute, always with arguments ajv has validated against inputSchema (defaults filled in):
  // the type the definition's execute declares, derived from that schema.
  return { ...spec, execute: made.execute, ...(made.close ? { close: made.close } : {}) };
}
