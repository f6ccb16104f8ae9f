/**
 * Hot reload and forge.yaml's agent-wide sections — all but the tools, MCP
 * servers, APIs and Python packages, which dev-reload.ts, dev-adapters.ts
 * and dev-python.ts follow. A save is compared with the running agent
 * section by section:
 *
 * - `approval:` is put in force as soon as the saved forge.yaml is read,
 *   on the save itself (applyApproval): not behind an earlier save's reload
 *   still running pip, nor after the slow or failing steps of its own;
 * - `model:`, `egress:`, `env_passthrough:` and `strict_outputs:` are put
 *   in force by the reload, for every call and turn that starts from then
 *   on (env_passthrough by making the tools that read it again: the caller
 *   is told which languages);
 * - `runtime:` is the container's (forge build), not this process's;
 * - every other section (`server:`, `state:`, `workdir:`, `schedules:`,
 *   `sandbox:`, `metrics:`, `emergent:`, the agent's name, version and
 *   description, `tool_dirs:`) is read once at start: the save is logged
 *   with a warning that `forge run --dev` must be restarted for it.
 *
 * No section is ever ignored without a word: one this file does not know
 * counts as needing a restart.
 */
import { ApprovalPolicy } from '../runtime/guard/approval-policy.ts';
import { createEgressPolicy } from '../runtime/guard/egress.ts';
import { DiagnosticError } from '../runtime/diagnostics.ts';
import type { AgentManifest, ApprovalSettings } from '../runtime/manifest.ts';
import { agentModel } from '../runtime/server/serve.ts';
import type { Logger } from '../runtime/tools/model.ts';
import type { Project } from '../stages/load-project.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import type { SourceAgent } from './source-agent.ts';

/**
 * Sections other parts of hot reload follow (tools, adapters, Python), that are derived from the tools, or
 * (approval) that are put in force apart from the rest (applyApproval).
 */
const FOLLOWED_ELSEWHERE = new Set(['tools', 'categories', 'mcp', 'apis', 'python', 'requirements', 'build', 'tool_interface_version', 'approval']);
/** The sections a running agent takes without a restart, besides approval. */
const LIVE = ['model', 'egress', 'env_passthrough', 'strict_outputs'] as const;
type LiveSection = (typeof LIVE)[number];
/** Used by `forge build` for the container, by nothing this process runs. */
const BUILD_ONLY = new Set(['runtime']);

/** forge.yaml's sections as the running agent has them, and as the last save had them. */
export interface DevSettingsState {
  /** Per section, as JSON: what the running agent uses. */
  running: Map<string, string>;
  /** Per section, as JSON: what the last save said (a section logged once per change, not at every reload). */
  saved: Map<string, string>;
  approval: {
    /** The rules in force, as JSON. */
    running: string;
    /** The last read of forge.yaml handed out (approvalRead), and the latest whose rules were put in force. */
    reads: number;
    applied: number;
  };
}

export function settingsAtStart(manifest: AgentManifest, project: Project): DevSettingsState {
  const sections = sectionsOf(manifest, project);
  return { running: new Map(sections), saved: new Map(sections), approval: { running: JSON.stringify(manifest.approval), reads: 0, applied: 0 } };
}

/**
 * A number for a read of forge.yaml about to start, taken before it: reads
 * overlap (one on each save, one in each reload), and the rules of a read
 * are put in force only if no later read's already are.
 */
export function approvalRead(state: DevSettingsState): number {
  return ++state.approval.reads;
}

/**
 * Puts the approval rules a read of forge.yaml found in force, if they
 * changed and no later read's rules are in force already. `refusal`: why
 * those rules cannot be put in force as they are (an auto_deny rule one slip
 * from a tool, which the start refuses): every call is refused instead,
 * until a save puts rules that can be in force.
 */
export function applyApproval(agent: SourceAgent, state: DevSettingsState, read: number, approval: ApprovalSettings, log: Logger, refusal?: string): void {
  if (read <= state.approval.applied) return;
  state.approval.applied = read;
  const text = refusal === undefined ? JSON.stringify(approval) : `refusing: ${refusal}`;
  if (text === state.approval.running) return;
  state.approval.running = text;
  // approval.clients is read from the manifest at each REST and MCP call.
  agent.manifest.approval = approval;
  if (refusal !== undefined) {
    agent.registry.setApproval(ApprovalPolicy.refusingEverything(`forge.yaml approval: ${refusal}`));
    log.warn(`forge.yaml: ${refusal}; every tool call is refused until it is fixed`);
    return;
  }
  agent.registry.setApproval(approvalPolicy(approval, log));
  log.info('forge.yaml: approval changed; in force for the calls and turns that start from now on');
}

export interface SettingsApplied {
  /** env_passthrough changed: the custom and YAML tools are to be made again with it. */
  remakeCodeTools: boolean;
}

/** Puts the live sections of a save (but approval: applyApproval) in force and says which need a restart. */
export function applySettings(agent: SourceAgent, state: DevSettingsState, manifest: AgentManifest, project: Project, log: Logger): SettingsApplied {
  const sections = sectionsOf(manifest, project);
  const applied: string[] = [];
  const needRestart: string[] = [];
  const backToRunning: string[] = [];
  const buildOnly: string[] = [];
  let remakeCodeTools = false;
  for (const [name, text] of sections) {
    const changedSinceSave = state.saved.get(name) !== text;
    state.saved.set(name, text);
    if (state.running.get(name) === text) {
      if (changedSinceSave && !isLive(name)) backToRunning.push(name);
      continue;
    }
    if (isLive(name)) {
      applyLive(agent, name, manifest, log);
      state.running.set(name, text);
      applied.push(name === 'model' && manifest.model ? `model (${manifest.model.provider}:${manifest.model.name})` : name);
      if (name === 'env_passthrough') remakeCodeTools = true;
    } else if (changedSinceSave) (BUILD_ONLY.has(name) ? buildOnly : needRestart).push(name);
  }
  // A section deleted from forge.yaml (state:, schedules:) is a change too.
  for (const name of [...state.saved.keys()].filter((n) => !sections.has(n))) {
    state.saved.delete(name);
    if (isLive(name)) {
      applyLive(agent, name, manifest, log);
      state.running.delete(name);
      applied.push(name);
    } else if (!state.running.has(name)) backToRunning.push(name);
    else (BUILD_ONLY.has(name) ? buildOnly : needRestart).push(name);
  }
  if (applied.length) log.info(`forge.yaml: ${applied.join(', ')} changed; in force for the calls and turns that start from now on`);
  // A save of emergent: makes forge_tool again: its quotas and allow_tools hold at once, for tools forged before too.
  const emergent = needRestart.indexOf('emergent');
  if (emergent >= 0) {
    needRestart.splice(emergent, 1);
    log.warn('forge.yaml: emergent changed; allow_tools, max_tools and the quotas hold from now on, for tools forged before too; timeout and memory apply to what is forged from now on (restart forge run --dev for the others)');
  }
  if (needRestart.length) log.warn(`forge.yaml: ${needRestart.join(', ')} changed; this server still runs with the old ${needRestart.length > 1 ? 'ones' : 'one'} — restart forge run --dev to apply ${needRestart.length > 1 ? 'them' : 'it'}`);
  if (backToRunning.length) log.info(`forge.yaml: ${backToRunning.join(', ')} back to what this server runs with`);
  if (buildOnly.length) log.info(`forge.yaml: ${buildOnly.join(', ')} changed; it is the bundle's container (forge build), nothing this server runs`);
  return { remakeCodeTools };
}

function isLive(name: string): name is LiveSection {
  return (LIVE as readonly string[]).includes(name);
}

function applyLive(agent: SourceAgent, name: LiveSection, manifest: AgentManifest, log: Logger): void {
  switch (name) {
    case 'egress':
      agent.http.setEgress(createEgressPolicy(manifest.egress));
      agent.manifest.egress = manifest.egress;
      return;
    case 'model':
      agent.manifest.model = manifest.model;
      // Before the server has made its agent loop, the loop is made with the manifest's (run.ts checks it once made).
      agent.loop?.useModel(agentModel(manifest.model, { http: agent.http, log }));
      return;
    case 'env_passthrough':
      agent.manifest.env_passthrough = manifest.env_passthrough;
      return;
    case 'strict_outputs':
      agent.registry.setStrictOutputs(manifest.strict_outputs ?? false);
      agent.manifest.strict_outputs = manifest.strict_outputs;
      return;
  }
}

/**
 * The saved rules; rules that do not parse (forge.yaml's schema lets few
 * through) put a policy in force that refuses every call until they are
 * fixed, rather than leave the old rules, which may have been looser.
 */
function approvalPolicy(approval: ApprovalSettings, log: Logger): ApprovalPolicy {
  try {
    return ApprovalPolicy.create(approval);
  } catch (err) {
    if (!(err instanceof DiagnosticError)) throw err;
    printDiagnostics(err.diagnostics);
    log.warn('forge.yaml: approval rules do not parse; every tool call is refused until they are fixed');
    return ApprovalPolicy.refusingEverything('forge.yaml approval: (its rules do not parse)');
  }
}

/** Each top-level section of the manifest as JSON, and tool_dirs (which the watcher was armed with). */
function sectionsOf(manifest: AgentManifest, project: Project): Map<string, string> {
  const sections = new Map<string, string>();
  for (const [name, value] of Object.entries(manifest)) if (!FOLLOWED_ELSEWHERE.has(name) && value !== undefined) sections.set(name, JSON.stringify(value));
  sections.set('tool_dirs', JSON.stringify(project.config.toolDirs.map((d) => d.absolute)));
  return sections;
}
