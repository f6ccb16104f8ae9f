/**
 * Hot reload for `forge run --dev`: watches forge.yaml and the tool
 * directories (cli/dev-watcher.ts), and on a change loads the project again
 * and swaps in only what changed — the tools whose definition or source
 * changed, and the tools that compose them — without restarting the
 * process. A call already running finishes on the old version; the old
 * version's worker is closed once its calls are done. A changed helper
 * module (a .py or .ts/.js file that is no tool) reloads the tools of its
 * language, since any of them may import it; one that stops compiling makes
 * the tools importing it unavailable instead (dev-helpers.ts). A tool whose
 * file stops loading stays listed and answers calls with the diagnostic
 * (unavailable-tool.ts).
 * A change to forge.yaml's MCP servers or APIs connects the new set
 * (dev-adapters.ts); a change to the declared Python packages installs them
 * (dev-python.ts). A saved `approval:` is in force as soon as forge.yaml is
 * read: on the save itself, not queued behind a reload still running pip
 * (dev-settings.ts).
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { leftOutByServers, runtimeFactories } from '../runtime/assemble.ts';
import { isForged } from '../runtime/tools/emergent/forged-mark.ts';
import { error, type Diagnostic } from '../runtime/diagnostics.ts';
import { createTool } from '../runtime/tools/create-tools.ts';
import { uncheckedPatternsWarning } from '../runtime/tools/local-schema.ts';
import { toSpec, type Logger, type Tool, type ToolSpec } from '../runtime/tools/model.ts';
import { unavailableTool } from '../runtime/tools/unavailable-tool.ts';
import { checkApprovalRules } from '../stages/check-approval-rules.ts';
import { loadConfig } from '../stages/config/load-config.ts';
import { REQUIREMENTS_FILE } from '../stages/python/python-dependencies.ts';
import { filterTools } from '../stages/filter-tools.ts';
import { loadProject, type Project } from '../stages/load-project.ts';
import type { ProjectTool } from '../stages/project-tool.ts';
import { resolveProject } from '../stages/resolve-agent.ts';
import { StageContext } from '../stages/stage.ts';
import { adaptersAtStart, reconnectAdapters, type DevAdapterState } from './dev-adapters.ts';
import { pythonAtStart, refreshProjectPython, type DevPythonState } from './dev-python.ts';
import { applyApproval, applySettings, approvalRead, settingsAtStart, type DevSettingsState } from './dev-settings.ts';
import { checkHelpers, codeLanguage, filesNeedingBrokenHelpers, isCodeFile, syntaxErrors } from './dev-helpers.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { watchSources } from './dev-watcher.ts';
import { errorsByToolName } from './tool-file-errors.ts';
import type { SourceAgent } from './source-agent.ts';
import { createSourceNodeLauncher, ToolCompileError } from '../stages/source-node-launcher.ts';

export interface ReloadReport {
  added: string[];
  changed: string[];
  removed: string[];
  /** Tools whose file no longer loads: still listed, answering with the diagnostic. */
  broken: string[];
}

interface ReloadOptions {
  configFile?: string;
  log: Logger;
  onReload?: (report: ReloadReport) => void;
}

/** Resolves once the watcher is armed (so no save after it is missed); the result stops watching. */
export async function watchForChanges(agent: SourceAgent, options: ReloadOptions): Promise<() => void> {
  const { config } = agent.project;
  const state: ReloadState = { placeholders: new WeakSet(), fileOf: new Map(), python: pythonAtStart(config.root, filterTools(agent.project.tools, { prod: false }).tools), adapters: adaptersAtStart(agent.manifest), settings: settingsAtStart(agent.manifest, agent.project), brokenHelpers: new Map(), unmatchedRules: new Set(checkApprovalRules(agent.project.config, agent.project.tools).map((d) => d.message)) };
  for (const tool of agent.project.tools) if (tool.file) state.fileOf.set(tool.file.absolute, tool.spec.name);
  let running = Promise.resolve();
  /** The last save of forge.yaml did not load. */
  let configBroken = false;
  const enqueue = (paths: string[]) => {
    // Reloads run one at a time, and one may be running pip for minutes: a saved approval: (a tightened one
    // above all) does not wait for it. Rules that do not load are left to the reload, which prints why.
    if (paths.includes(config.file)) {
      const read = approvalRead(state.settings);
      void loadConfig(config.file).then(
        (loaded) => {
          if (loaded.config) {
            // The save that fixes it is said too: after "does not load", silence would leave it in doubt.
            if (configBroken) options.log.info('forge.yaml loads again');
            configBroken = false;
            // Checked against the tools running now: the reload checks them again against what the save holds.
            const running = agent.registry.list().map((spec) => ({ spec }));
            return applyApproval(agent, state.settings, read, loaded.config.approval, options.log, approvalRefusal(checkApprovalRules(loaded.config, running)));
          }
          configBroken = true;
          // Its errors are printed by the reload; what matters here is that a deny just written is not in force.
          options.log.warn("forge.yaml does not load, so nothing in it is in force yet: the approval rules of its last save that loaded still decide every call");
        },
        (err: unknown) => options.log.warn(`reading forge.yaml's approval failed: ${(err as Error).message}`),
      );
    }
    running = running.then(() => reload(agent, options, state, paths)).then(
      (report) => {
        const parts = [['added', report.added], ['reloaded', report.changed], ['removed', report.removed], ['cannot load', report.broken]]
          .filter(([, names]) => names.length)
          .map(([verb, names]) => `${verb} ${(names as string[]).join(', ')}`);
        if (!parts.length) return;
        options.log.info(`tools ${parts.join('; ')}`);
        options.onReload?.(report);
      },
      (err: unknown) => options.log.warn(`reload failed: ${(err as Error).message}`),
    );
  };
  const watched = [config.file, ...config.toolDirs.map((d) => d.absolute)];
  const watcher = await watchSources(watched, enqueue);
  // requirements.txt beside forge.yaml declares Python packages as a tool's # /// script block does. It may
  // not exist yet, so its folder is watched for it (not the file itself: chokidar, given a path that is not
  // there, says it is ready before its other watches are armed, and the first saves in tool_dirs are lost).
  const requirements = join(config.root, REQUIREMENTS_FILE);
  const requirementsWatcher = await watchSources([config.root], (paths) => paths.includes(requirements) && enqueue([requirements]), { depth: 0 });
  options.log.debug(`watching ${[...watched, requirements].map((p) => relative(process.cwd(), p) || p).join(', ')} for changes`);
  // A tool file that was already broken at start is listed too (and answers with its error), as one that breaks later is.
  enqueue([]);
  return () => void Promise.all([watcher.close(), requirementsWatcher.close()]);
}

/** Why rules with these unmatched-rule diagnostics cannot be in force as they are: the first error's message (the start refuses them). */
function approvalRefusal(unmatched: readonly Diagnostic[]): string | undefined {
  return unmatched.find((d) => d.severity === 'error')?.message.replace(/\.$/, '');
}

interface ReloadState {
  /** The stand-ins for tools that do not load, so the next good save replaces them. */
  placeholders: WeakSet<Tool>;
  /** Which tool each file defined when it last loaded, to keep its name when it breaks. */
  fileOf: Map<string, string>;
  /** The Python packages installed, and why the last install failed. */
  python: DevPythonState;
  /** The MCP servers and APIs the adapter runtime was made for. */
  adapters: DevAdapterState;
  /** forge.yaml's other sections: what the running agent has, what the last save said. */
  settings: DevSettingsState;
  /** Helper modules that do not compile, with why: the tools importing them stay unavailable until they do. */
  brokenHelpers: Map<string, Diagnostic[]>;
  /** What forge.yaml's approval rules that matched no tool at the last load were told (messages): each is said once, not at every save. */
  unmatchedRules: Set<string>;
}

/** The kinds of tools whose code is the project's: each runs with forge.yaml's env_passthrough. */
type CodeKind = 'python' | 'node' | 'yaml';

async function reload(agent: SourceAgent, options: ReloadOptions, state: ReloadState, paths: string[]): Promise<ReloadReport> {
  const report: ReloadReport = { added: [], changed: [], removed: [], broken: [] };
  const ctx = new StageContext(process.cwd(), false);
  const read = approvalRead(state.settings);
  const project = await loadProject({ configFile: options.configFile }, ctx).catch(() => undefined);
  printDiagnostics(ctx.diagnostics);
  if (!project) return report;
  // A rule that matches no tool now (a removed or renamed tool it named, a misspelt one just saved): said as at
  // start, once, not at every later save. One the start refuses (an auto_deny rule one slip from a tool, which
  // would run unrefused) refuses every call until it is fixed, as rules that do not parse do.
  const unmatched = checkApprovalRules(project.config, project.tools);
  const seen = state.unmatchedRules;
  state.unmatchedRules = new Set(unmatched.map((d) => d.message));
  printDiagnostics(unmatched.filter((d) => !seen.has(d.message)));
  // First, before anything slow or that may fail (helpers, pip, the adapters): the rules this reload read.
  applyApproval(agent, state.settings, read, project.config.approval, options.log, approvalRefusal(unmatched));
  let fresh = filterTools(project.tools, { prod: false }).tools;
  // Printed as the other diagnostics are, with the line: the warning below names only the tool. A tool answering
  // with an error is checked again too, so that another file's save does not make it as if it compiled.
  // Compiled only for a save: the first reload (no paths) would bundle every TS tool of the project at start.
  printDiagnostics(await markUnloadable(project, paths.length ? fresh.filter((t) => t.file && (paths.includes(t.file.absolute) || isPlaceholder(agent, state, t.spec.name))) : fresh, paths.length > 0));
  const helpers = helperPaths(paths, project, ctx.diagnostics, state);
  // A helper that does not compile takes down the tools importing it, with its error at its line (dev-helpers.ts).
  printDiagnostics(await checkHelpers(state.brokenHelpers, project, helpers));
  const needing = filesNeedingBrokenHelpers(state.brokenHelpers, project);
  for (const tool of fresh) if (!tool.loadErrors && tool.file && needing.has(tool.file.absolute)) tool.loadErrors = needing.get(tool.file.absolute);
  // Changed declarations install as the start does; a tool whose packages are not there answers with why, not an ImportError.
  const python = await refreshProjectPython(state.python, project.config.root, fresh, (line) => options.log.info(line));
  for (const tool of fresh) if (!tool.loadErrors && python.unavailable.has(tool.spec.name)) tool.loadErrors = python.unavailable.get(tool.spec.name);
  const support = supportKinds(helpers);
  // Python processes started before the install run without the new packages (or another interpreter).
  if (python.installed) support.add('python');
  const { resolved, code } = await resolveProject(project, { tools: fresh });
  // model:, egress:, env_passthrough: and strict_outputs: as the resolved manifest has them (egress with the adapters' hosts).
  if (applySettings(agent, state.settings, resolved.manifest, project, options.log).remakeCodeTools) for (const kind of ['python', 'node', 'yaml'] as const) support.add(kind);
  // A server added to (or removed from, or changed in) forge.yaml is connected as at start, not left to a restart.
  const adapters = await reconnectAdapters(agent, state.adapters, resolved, code, fresh, options.log);
  if (adapters.leftOut.size) fresh = fresh.filter((t) => !adapters.leftOut.has(t.spec.name));
  // Why a server's tool is not there (its tools: allow/deny), for the servers as forge.yaml has them now, as at start.
  agent.registry.setLeftOut(leftOutByServers(resolved.manifest.mcp?.servers ?? []));
  let ok = false;
  try {
    // forge_tool adds the tools it forges to the running registry.
    const factories = { ...runtimeFactories(resolved, code, { http: agent.http, adapters: agent.adapters, log: options.log }), registry: agent.registry };
    for (const tool of project.tools) if (tool.file) state.fileOf.set(tool.file.absolute, tool.spec.name);

    const brokenTools = brokenByName(project, ctx.diagnostics, state, new Set(fresh.map((t) => t.spec.name)));
    const freshNames = new Set([...fresh.map((t) => t.spec.name), ...brokenTools.keys()]);
    for (const current of agent.registry.list()) {
      // Forged tools are not in the sources: a reload keeps them.
      if (freshNames.has(current.name) || isForged(current)) continue;
      agent.registry.unregister(current.name);
      void agent.registry.retire(current);
      report.removed.push(current.name);
    }

    for (const [name, problems] of brokenTools) {
      swapInUnavailable(agent, state, name, problems, problems[0].file ?? name);
      report.broken.push(name);
      options.log.warn(`tool ${name} cannot load; calls to it answer with the error until the file is fixed`);
    }

    for (const tool of toRecreate(fresh, agent, state, support, adapters.replaced)) {
      let next: Tool;
      if (tool.loadErrors) {
        swapInUnavailable(agent, state, tool.spec.name, tool.loadErrors, tool.origin, tool.spec);
        report.broken.push(tool.spec.name);
        options.log.warn(`tool ${tool.spec.name} cannot load; calls to it answer with the error until the file is fixed`);
        continue;
      }
      try {
        next = createTool(tool.spec, factories);
      } catch (err) {
        options.log.warn(`cannot load ${tool.spec.name}: ${(err as Error).message}`);
        // Left as it was, an adapter tool would call through the old runtime, which closes below: it answers why instead.
        if (adapters.replaced && tool.spec.adapter && agent.registry.get(tool.spec.name)) {
          markUnavailable(agent, state, tool.spec.name, `cannot be made on the reconnected servers: ${(err as Error).message}`);
          report.broken.push(tool.spec.name);
        }
        continue;
      }
      // As the start says it (createRegistry): an adapter tool made again may bring a new schema.
      const unchecked = uncheckedPatternsWarning(tool.spec);
      if (unchecked) printDiagnostics([{ ...unchecked, file: tool.origin }]);
      (swapIn(agent, next, tool.origin) ? report.changed : report.added).push(tool.spec.name);
    }
    agent.project = project;
    // The sources' tools, as a build's manifest has them: forged tools are no one's to publish (the agent card is open).
    agent.manifest.tools = agent.registry.list().filter((t) => !isForged(t)).map(toSpec);
    ok = true;
    return report;
  } finally {
    // On every path once the new adapter runtime is in: the old one closes when its calls are done. A reload that
    // failed on the way leaves old adapter tools that were not made again; they answer why until the next save makes them.
    for (const stale of adapters.settle(ok)) markUnavailable(agent, state, stale.name, ok ? 'was not made again on the reconnected servers' : 'was not made again: the reload failed (save again to retry)');
  }
}

/**
 * A tool file that no longer compiles (Python's compiler, esbuild's parser:
 * what `forge validate` runs; for TS/JS, esbuild's bundling too) is a tool
 * that cannot load, as one whose docstring broke: it stays listed and calls
 * answer with the error, instead of failing in the worker with a traceback.
 */
async function markUnloadable(project: Project, tools: ProjectTool[], compile: boolean): Promise<Diagnostic[]> {
  const byFile = await syntaxErrors(project, tools.flatMap((t) => (t.file && !t.scope && !t.loadErrors && t.file.kind !== 'yaml' ? [t.file] : [])));
  const found: Diagnostic[] = [];
  for (const tool of tools) {
    const errors = tool.file && byFile.get(tool.file.absolute);
    if (!errors) continue;
    tool.loadErrors = errors;
    found.push(...errors);
  }
  // An import that does not resolve shows only when the tool is bundled: each changed TS/JS tool is compiled now,
  // as its first call would compile it (the code is kept for that call), so that it answers with the error at its
  // line instead of failing to start, and the reload says so instead of "reloaded".
  if (!compile) return found;
  const launcher = createSourceNodeLauncher(project.config.root);
  for (const tool of tools) {
    const kind = tool.file?.kind;
    if (tool.loadErrors || tool.scope || (kind !== 'typescript' && kind !== 'javascript') || !tool.spec.source) continue;
    try {
      await (tool.spec.source.style === 'execute' ? launcher.worker(tool.spec) : launcher.script(tool.spec));
    } catch (err) {
      if (!(err instanceof ToolCompileError) || !err.diagnostics.length) continue; // said at the call, as before
      tool.loadErrors = err.diagnostics;
      found.push(...err.diagnostics);
    }
  }
  return found;
}

/** An adapter tool the reload could not make again on the new runtime, listed with why (as a tool whose file breaks). */
function markUnavailable(agent: SourceAgent, state: ReloadState, name: string, why: string): void {
  swapInUnavailable(agent, state, name, [error('FORGE_TOOL_UNAVAILABLE', `tool "${name}" ${why}`)], name);
}

/** Lists `name` as unavailable, answering calls with `problems`; it describes itself as `spec`, else as the tool it replaces (not another placeholder). */
function swapInUnavailable(agent: SourceAgent, state: ReloadState, name: string, problems: readonly Diagnostic[], origin: string, spec?: ToolSpec): void {
  const current = agent.registry.get(name);
  const placeholder = unavailableTool(name, problems, spec ?? (current && !state.placeholders.has(current) ? toSpec(current) : undefined));
  state.placeholders.add(placeholder);
  swapIn(agent, placeholder, origin);
}

/** Replaces (or adds) a tool; the old version finishes its calls first. True when there was one. */
function swapIn(agent: SourceAgent, tool: Tool, origin: string): boolean {
  const previous = agent.registry.replace(tool, origin);
  if (previous) void agent.registry.retire(previous);
  return previous !== undefined;
}

/**
 * Tools whose spec (which carries the source's hash) changed, that were unavailable, whose helper modules changed,
 * or that are adapter tools of a replaced adapter runtime; then whoever composes them.
 */
function toRecreate(fresh: ProjectTool[], agent: SourceAgent, state: ReloadState, support: Set<CodeKind>, adaptersReplaced: boolean): ProjectTool[] {
  const picked = new Set<string>();
  for (const tool of fresh) {
    const current = agent.registry.get(tool.spec.name);
    const kind = codeKind(tool.spec);
    const same = current && !state.placeholders.has(current) && !tool.loadErrors && specKey(current) === specKey(tool.spec) && !(kind && support.has(kind)) && !(adaptersReplaced && tool.spec.adapter);
    if (!same) picked.add(tool.spec.name);
  }
  // A meta-tool checked its composed tools when it was made: make it again against the new ones.
  for (let grew = picked.size > 0; grew; ) {
    grew = false;
    for (const tool of fresh) {
      if (picked.has(tool.spec.name) || !tool.spec.composedOf?.some((n) => picked.has(n))) continue;
      picked.add(tool.spec.name);
      grew = true;
    }
  }
  return fresh.filter((t) => picked.has(t.spec.name));
}

/**
 * The saved paths that are helper modules (code files that are no tool). A
 * deleted file that was a tool is a removed tool, and a tool file that does
 * not load (a docstring error: the load reported it) is a broken tool, not a
 * helper: an edit to a tool file never reloads the other tools, and neither
 * does its delete or its typo.
 */
function helperPaths(paths: string[], project: Project, diagnostics: readonly Diagnostic[], state: ReloadState): string[] {
  const toolFiles = new Set(project.tools.map((t) => t.file?.absolute).filter(Boolean));
  const root = project.config.root;
  const failedTools = new Set(diagnostics.flatMap((d) => (d.severity === 'error' && d.file ? [resolve(root, d.file), resolve(process.cwd(), d.file)] : [])));
  return paths.filter((path) => isCodeFile(path) && !toolFiles.has(path) && path !== project.config.file && !failedTools.has(path) && !(state.fileOf.has(path) && !existsSync(path)));
}

/** Which languages' helper modules changed: any tool of the language may import them. */
function supportKinds(helpers: readonly string[]): Set<CodeKind> {
  const kinds = new Set<CodeKind>();
  for (const path of helpers) {
    const language = codeLanguage(path);
    if (language) kinds.add(language);
  }
  return kinds;
}

function isPlaceholder(agent: SourceAgent, state: ReloadState, name: string): boolean {
  const current = agent.registry.get(name);
  return current !== undefined && state.placeholders.has(current);
}

/** Errors in tool files, by the name the tool had (or declares, or its file's stem), for tools not loaded. */
function brokenByName(project: Project, diagnostics: readonly Diagnostic[], state: ReloadState, loaded: Set<string>): Map<string, Diagnostic[]> {
  const byName = errorsByToolName(project, diagnostics, (file) => state.fileOf.get(file));
  for (const name of loaded) byName.delete(name);
  return byName;
}

/** Which of the project's code a tool runs (none: a builtin, an adapter tool). */
function codeKind(spec: ToolSpec): CodeKind | undefined {
  if (!spec.source) return undefined;
  return spec.source.kind === 'python' ? 'python' : spec.source.kind === 'yaml' ? 'yaml' : 'node';
}

/** A spec as text, in one key order: a freshly parsed spec and a registered tool's list the same keys in different orders. */
function specKey(spec: ToolSpec): string {
  return JSON.stringify(toSpec(spec));
}
