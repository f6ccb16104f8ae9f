/**
 * The agent as `forge run` and `forge chat` serve it: straight from the
 * project's sources, through the same stages the build runs, with the same
 * manifest shape the bundle serves. Dev tools only with --dev.
 */
import type { Agent } from '../runtime/agent/agent.ts';
import { assembleRuntime } from '../runtime/assemble.ts';
import { startToolSandbox } from '../runtime/exec/start-sandbox.ts';
import { SandboxRequiredError, type SandboxStatus } from '../runtime/exec/tool-sandbox.ts';
import type { AgentManifest } from '../runtime/manifest.ts';
import { hideSecretsBeforeServers } from '../runtime/secrets-ahead.ts';
import type { HttpClient } from '../runtime/net/http-client.ts';
import type { AdapterRuntime } from '../runtime/tools/adapters/adapter-runtime.ts';
import type { Logger } from '../runtime/tools/model.ts';
import type { ToolRegistry } from '../runtime/tools/registry.ts';
import { checkApprovalRules } from '../stages/check-approval-rules.ts';
import { filterTools } from '../stages/filter-tools.ts';
import type { Project } from '../stages/load-project.ts';
import { resolveProject } from '../stages/resolve-agent.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { hasErrors } from '../runtime/diagnostics.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { loadProjectForCli } from './project-loader.ts';
import { reportDiagnostics } from './command-failure.ts';
import { prepareProjectPython } from './project-python.ts';
import { sandboxRequiredUsage } from './usage-error.ts';

export interface SourceAgent {
  project: Project;
  manifest: AgentManifest;
  registry: ToolRegistry;
  http: HttpClient;
  adapters: AdapterRuntime;
  /** The tool sandbox, installed before the MCP servers started. */
  sandbox: SandboxStatus;
  /** The agent loop, once the server made it (`forge run`): hot reload gives it a model saved in forge.yaml. */
  loop?: Agent;
}

export async function loadSourceAgent(options: { configFile?: string; dev: boolean; log: Logger; json?: boolean }): Promise<SourceAgent | undefined> {
  // A broken tool file must not stop a dev server (it is reported and left out); anything else must be right.
  const json = options.json ?? false;
  const { project, diagnostics } = await loadProjectForCli(options.configFile, { strict: !options.dev, json });
  // Without --json the loader printed why; with it, that is the command's one JSON document, as forge build prints it.
  if (!project) {
    writeFailureJson(json, diagnostics);
    return undefined;
  }
  // With --json the loader printed nothing: an agent that starts still shows its warnings (and the tools --dev left out) on stderr.
  if (json) printDiagnostics(diagnostics);
  // forge.yaml's approval rules that match no tool, as forge build says: an auto_deny one slip from a tool this agent has would let it run unrefused.
  const unmatched = checkApprovalRules(project.config, project.tools);
  if (hasErrors(unmatched)) {
    reportDiagnostics(json, unmatched);
    return undefined;
  }
  printDiagnostics(unmatched);
  const selected = filterTools(project.tools, { prod: !options.dev });
  if (!(await prepareProjectPython(project.config.root, selected.tools, { json }))) return undefined;
  const { resolved, code } = await resolveProject(project, { tools: selected.tools, prod: !options.dev });
  // Before the MCP servers start: a stdio one starts in it (server-sandbox.ts).
  const sandbox = await sandboxSourceAgent(project, options.log);
  hideSecretsBeforeServers(resolved.manifest, process.env, project.config.workDir);
  // A running agent connects its MCP servers at start: a required one that fails stops it
  // here; the tools of an optional one that is down are left out. forge.yaml was validated, so its rules parse.
  const assembled = await assembleRuntime(resolved, code, { log: options.log, connect: true });
  if (!assembled.ok) {
    reportDiagnostics(json, assembled.diagnostics);
    return undefined;
  }
  printDiagnostics(assembled.diagnostics);
  const { registry, http, adapters } = assembled;
  return { project, manifest: resolved.manifest, registry, http, adapters, sandbox };
}

/**
 * The sandbox the built bundle puts around every tool process, for the agent
 * run from sources: `forge run` and `forge chat` alike, since a model directs
 * the calls either way. `sandbox: required` where it cannot be met is a usage
 * error.
 */
async function sandboxSourceAgent(project: Project, log: Logger): Promise<SandboxStatus> {
  const { config } = project;
  try {
    return await startToolSandbox(config.sandbox, config.workDir, log, process.env, [config.root]);
  } catch (err) {
    if (!(err instanceof SandboxRequiredError)) throw err;
    throw sandboxRequiredUsage(err);
  }
}
