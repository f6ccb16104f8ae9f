/**
 * Hot reload and forge.yaml's `mcp:` and `apis:` sections. The adapter
 * runtime is made for one set of servers and APIs: a save that changes the
 * set (a server added to a project that had none, one removed, its command
 * changed) gets a new runtime, connected as the start connects it — a
 * server that fails is reported and its tools are left out — and every
 * adapter tool is made again on it. The old connections close once the
 * calls running on them are done, whether the reload went through or not
 * (the old tools, retired one by one, do not close them: they share them). A
 * save that leaves the sections as they were keeps the connections (no
 * server is restarted); after a reload that failed part way, the next save
 * connects again and makes every adapter tool again.
 */
import { runtimeFactories, type CodeSource, type ResolvedAgent } from '../runtime/assemble.ts';
import { startAdapterTools, type AdapterRuntime } from '../runtime/tools/adapters/adapter-runtime.ts';
import type { McpServerSettings } from '../runtime/tools/adapters/settings.ts';
import type { Logger, Tool } from '../runtime/tools/model.ts';
import type { ProjectTool } from '../stages/project-tool.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import type { SourceAgent } from './source-agent.ts';

/** The adapter settings the running runtime was made with. */
export interface DevAdapterState {
  servers: McpServerSettings[];
  apis: string;
  /**
   * False from the moment a reload puts a new runtime in until that reload
   * has gone through: one that failed on the way may have made only some
   * adapter tools on the new runtime, so the next save replaces it again.
   */
  settled: boolean;
}

export function adaptersAtStart(manifest: ResolvedAgent['manifest']): DevAdapterState {
  return { servers: manifest.mcp?.servers ?? [], apis: JSON.stringify(manifest.apis ?? []), settled: true };
}

export interface Reconnected {
  /** The adapter runtime was replaced: every adapter tool must be made again on it. */
  replaced: boolean;
  /** Tools of servers that failed to connect (reported), left out as at start. */
  leftOut: Set<string>;
  /**
   * Ends the swap, on every path once the new runtime is in (call it in a
   * finally): the old runtime closes once the calls on its connections are done, and the
   * swap counts as done only when `ok`. Returns the old runtime's tools still
   * registered — not made again, so their calls would reach closed
   * connections — for the caller to mark unavailable.
   */
  settle(ok: boolean): Tool[];
}

export async function reconnectAdapters(agent: SourceAgent, state: DevAdapterState, resolved: ResolvedAgent, code: CodeSource, tools: readonly ProjectTool[], log: Logger): Promise<Reconnected> {
  const servers = resolved.manifest.mcp?.servers ?? [];
  const apis = JSON.stringify(resolved.manifest.apis ?? []);
  const changes = serverChanges(state.servers, servers);
  if (!changes.length && apis === state.apis && state.settled) return { replaced: false, leftOut: new Set(), settle: () => [] };

  const previous = agent.adapters;
  const oldTools = agent.registry.list().filter((t) => t.adapter);
  const { adapters } = runtimeFactories(resolved, code, { http: agent.http, log });
  let started;
  try {
    started = await startAdapterTools(adapters, tools.map((t) => t.spec));
  } catch (err) {
    // Not in place yet: the old runtime and its tools stay as they were, and the servers this one started stop.
    void adapters.close();
    throw err;
  }
  printDiagnostics(started.diagnostics);
  if (changes.length) log.info(`mcp: ${changes.join('; ')}`);
  else if (!state.settled) log.info('mcp: connecting again (the last reload failed)');
  const kept = new Set(started.specs.map((s) => s.name));
  // The state says what agent.adapters was made for, so a save back to the old sections is a change too.
  agent.adapters = adapters;
  // Closed with the registry at shutdown, as the runtime it replaces (which stays the registry's until it closes).
  agent.registry.own(adapters);
  state.servers = servers;
  state.apis = apis;
  state.settled = false;
  let settled = false;
  return {
    replaced: true,
    leftOut: new Set(tools.filter((t) => !kept.has(t.spec.name)).map((t) => t.spec.name)),
    settle: (ok) => {
      if (settled) return [];
      settled = true;
      state.settled = ok;
      void closeWhenIdle(agent, previous);
      return oldTools.filter((t) => agent.registry.get(t.name) === t);
    },
  };
}

/**
 * The old runtime closes once no call runs on its connections: those of the tools it replaced, and of any
 * older version of them still finishing. Until then the registry still closes it if the agent shuts down.
 */
async function closeWhenIdle(agent: SourceAgent, runtime: AdapterRuntime): Promise<void> {
  await runtime.closeWhenIdle();
  agent.registry.disown(runtime);
}

/** "fs added", "old removed", "db changed": what a save did to the servers. */
function serverChanges(before: readonly McpServerSettings[], after: readonly McpServerSettings[]): string[] {
  const was = new Map(before.map((s) => [s.name, JSON.stringify(s)]));
  const is = new Map(after.map((s) => [s.name, JSON.stringify(s)]));
  return [
    ...[...is.keys()].filter((n) => !was.has(n)).map((n) => `${n} added`),
    ...[...was.keys()].filter((n) => !is.has(n)).map((n) => `${n} removed`),
    ...[...is.keys()].filter((n) => was.has(n) && was.get(n) !== is.get(n)).map((n) => `${n} changed`),
  ];
}
