/**
 * Turns tool specs (from agent.json, or from a project's sources) into a
 * registry of running tools. The one place where a spec meets its code.
 */
import { error, warning, type Diagnostic } from '../diagnostics.ts';
import type { ApprovalPolicy } from '../guard/approval-policy.ts';
import { HttpClient } from '../net/http-client.ts';
import type { ScheduledTask } from '../scheduler/scheduled-task.ts';
import { instantiateBuiltin, type BuiltinDefinition, type BuiltinHost } from './builtin/define.ts';
import { CallLog, type AgentIntrospection } from './call-log.ts';
import { createCustomTool, type CustomToolHost } from './custom/custom-tool.ts';
import { toSpec, type Logger, type Tool, type ToolSpec } from './model.ts';
import { silentLogger, ToolRegistry } from './registry.ts';
import { oversizedSchemaWarning, uncheckedPatternsWarning } from './local-schema.ts';
import { toolOutputToLog } from './tool-output-log.ts';

/** Makes the running tool for an adapter spec (one with `adapter`: an MCP server's tool, an OpenAPI operation). */
export interface AdapterFactory {
  create(spec: ToolSpec): Tool;
}

export interface ToolFactories {
  /** Builtin, adapter and dev tools shipped with Forge, by name. */
  builtins: Record<string, BuiltinDefinition<any>>;
  custom: CustomToolHost;
  log?: Logger;
  /** Every outbound request goes through this client (default: one with no egress rules). */
  http?: HttpClient;
  env?: NodeJS.ProcessEnv;
  /** The schedules declared in forge.yaml, for the schedule tools. */
  schedules?: readonly ScheduledTask[];
  /**
   * What debug_console shows as the agent's config (agent.json, or the resolved forge.yaml), and forge_tool's
   * judge takes the model from; a function is asked at each look (forge run --dev changes it on a save).
   */
  agentConfig?: unknown;
  /** Set by createRegistry: the running agent, for debug_console. */
  agent?: AgentIntrospection;
  /** Adapter tools (runtime/tools/adapters/adapter-runtime.ts). */
  adapters?: AdapterFactory;
  /** Makes YAML tools (runtime/tools/yaml/load-yaml-tool.ts); present where YAML tools exist. */
  yaml?: (spec: ToolSpec, file: string) => Tool;
  /** The approval policy every call goes through. */
  approval?: ApprovalPolicy;
  /** Set by createRegistry: the registry being filled (forge_tool adds the tools it forges to it). */
  registry?: ToolRegistry;
  /** Makes a model client (forge_tool's model judge); set by the runtime's assembly. */
  modelClient?: BuiltinHost<unknown>['modelClient'];
  /** forge.yaml's strict_outputs: a result that does not match the declared Output fails the call. */
  strictOutputs?: boolean;
}

export function createTool(spec: ToolSpec, factories: ToolFactories): Tool {
  if (spec.source?.kind === 'yaml') {
    if (!factories.yaml) throw new Error(`tool "${spec.name}" is a YAML tool, and this runtime was built without YAML tool support`);
    return factories.yaml(spec, factories.custom.resolveSource(spec.source.path));
  }
  if (spec.source) {
    const host = factories.custom.onStderr ? factories.custom : { ...factories.custom, onStderr: toolOutputToLog(factories.log ?? silentLogger) };
    return createCustomTool(spec, host);
  }
  if (spec.adapter) {
    if (!factories.adapters) throw new Error(`adapter tool "${spec.name}" cannot run here: no adapters were set up`);
    return factories.adapters.create(spec);
  }
  const definition = factories.builtins[spec.name];
  if (!definition) throw new Error(`no implementation for tool "${spec.name}" in this runtime`);
  factories.http ??= new HttpClient();
  return instantiateBuiltin(definition, spec, {
    workDir: factories.custom.workDir,
    log: factories.log ?? silentLogger,
    http: factories.http,
    env: factories.env ?? process.env,
    agent: factories.agent,
    schedules: factories.schedules,
    registry: factories.registry,
    modelClient: factories.modelClient,
  });
}

export interface RegistryBuild {
  registry: ToolRegistry;
  diagnostics: Diagnostic[];
}

export function createRegistry(specs: readonly ToolSpec[], factories: ToolFactories, origin: (spec: ToolSpec) => string): RegistryBuild {
  const registry = new ToolRegistry({ workDir: factories.custom.workDir, log: factories.log, approval: factories.approval, strictOutputs: factories.strictOutputs });
  const calls = new CallLog();
  registry.onCall((event) => calls.record(event));
  factories = {
    ...factories,
    agent: factories.agent ?? { tools: (session) => registry.listFor(session).map(toSpec), recentCalls: () => calls.list(), config: () => (typeof factories.agentConfig === 'function' ? factories.agentConfig() : factories.agentConfig) ?? {} },
    registry,
  };
  const diagnostics: Diagnostic[] = [];
  for (const spec of specs) {
    let tool: Tool;
    try {
      tool = createTool(spec, factories);
    } catch (err) {
      // A tool for another platform is left out with a warning; anything else is an error.
      if ((err as Error).name === 'NotForThisPlatform') diagnostics.push(warning('FORGE_TOOL_PLATFORM', (err as Error).message, { file: origin(spec) }));
      else diagnostics.push(error('FORGE_TOOL_UNAVAILABLE', (err as Error).message, { file: origin(spec) }));
      continue;
    }
    const problem = registry.register(tool, origin(spec));
    if (problem) diagnostics.push(problem);
    // Said once, as the adapter's tools load: what of their schemas is not checked here (local-schema.ts).
    for (const unchecked of [oversizedSchemaWarning(spec), uncheckedPatternsWarning(spec)]) if (unchecked) diagnostics.push({ ...unchecked, file: origin(spec) });
  }
  return { registry, diagnostics };
}
