import { resolve } from 'node:path';
import { assembleRuntime } from '../../runtime/assemble.ts';
import { startToolSandbox } from '../../runtime/exec/start-sandbox.ts';
import { probeSandbox, type SandboxProbe } from '../../runtime/exec/sandbox-probe.ts';
import { sandboxMode } from '../../runtime/exec/sandbox-mode.ts';
import { SandboxRequiredError } from '../../runtime/exec/tool-sandbox.ts';
import { DiagnosticError, error, hasErrors, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { argumentsHint, type ToolRegistry } from '../../runtime/tools/registry.ts';
import { fail, type Logger, type ToolResult } from '../../runtime/tools/model.ts';
import { unknownToolHint } from '../../runtime/tools/unknown-tool.ts';
import type { Project } from '../../stages/load-project.ts';
import type { ProjectTool } from '../../stages/project-tool.ts';
import { parseToolReference } from '../../runtime/tools/yaml/definition.ts';
import { CATALOG, findCatalogEntry } from '../../runtime/tools/catalog.ts';
import { runsPython, toolsReached } from '../../runtime/tools/reach.ts';
import { isYamlTool } from '../../runtime/tools/yaml/yaml-tool.ts';
import { resolveProject } from '../../stages/resolve-agent.ts';
import { checkSources } from '../../stages/check-sources.ts';
import { collectPythonDependencies } from '../../stages/python/python-dependencies.ts';
import { unmatchedOptionRules } from '../../runtime/tools/unmatched-rules.ts';
import { checkApprovalRules } from '../../stages/check-approval-rules.ts';
import { approvalFromOptions, APPROVAL_OPTIONS, APPROVAL_USAGE, type ApprovalChoice } from '../approval-options.ts';
import { parseCommand, parseTimeout } from '../args.ts';
import { renderShown, toShown, type ShownCommand } from '../command-text.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { parseParams } from '../param-values.ts';
import { loadProjectForCli, outsideProjectHint } from '../project-loader.ts';
import { reportDiagnostics } from '../command-failure.ts';
import { diagnosticJson, jsonDocument, toolFailureJson, writeFailureJson } from '../../runtime/failure-json.ts';
import { errorsByToolName } from '../tool-file-errors.ts';
import { toolFailureLocation } from '../../runtime/tools/tool-failure-location.ts';
import { tracebackKind } from '../../runtime/tools/traceback-kind.ts';
import { workDirPathHint } from '../work-dir-paths.ts';
import { prepareProjectPython } from '../project-python.ts';
import { color as c, errColor, formatMs } from '../terminal.ts';
import { logText } from '../../runtime/telemetry/log-text.ts';
import { redactSecrets } from '../../runtime/known-secrets.ts';
import { terminalText } from '../../runtime/telemetry/terminal-text.ts';
import { sandboxRequiredUsage, UsageError } from '../usage-error.ts';
import { STOP_SIGNAL_NAMES, STOP_SIGNALS, type StopSignal } from '../../runtime/stop-signals.ts';

export const usage = `usage: forge tool run NAME [JSON] [--param K=V ...] [--input JSON] [--timeout T] [--show-command] [--dry-run] [--json]

Runs one tool from the project's sources — no build, no LLM — with the same
argument checks, environment, timeout and approval policy the agent's
runtime applies. NAME may name a scope: user/summarize, global/fetch.
Outside a project, the user and global scopes' tools run in the current
directory.

The arguments are one JSON object after the name (as the bundle's
\`node runtime.mjs call NAME JSON\` takes them), --input, or --param.
Ctrl-C stops the tool and exits 130 (FORGE_TOOL_CANCELLED); SIGTERM and SIGHUP
stop it too, exiting 143 and 129.

options:
  --param K=V     an argument; the value is converted to the parameter's type
                  (numbers, true/false, a,b,c or JSON for lists, JSON for objects)
  --input JSON    all arguments as one JSON object (--param values win)
  --timeout T     stop the tool after T: milliseconds (30000) or a duration (30s, 2m)
  --show-command  print each command a YAML tool runs, exactly as it runs it
  --dry-run       check the arguments and run nothing (with --show-command:
                  print what would run; results of earlier steps show as <step.output>)
  --json          print the whole result as JSON

${APPROVAL_USAGE}

examples:
  forge tool run word_count --param text="the quick brown fox"
  forge tool run uuid_generate '{"version": 7, "count": 3}'
  forge tool run greet --param name="O'Brien" --show-command
  forge tool run deploy --param env=prod --dry-run --show-command
  forge tool run user/summarize --param text="..." --yes
`;

export async function run(argv: string[]): Promise<number> {
  // A run that ends before the tool starts (a syntax error, a refusal) stops the sandbox probe begun for it, rather than wait on it.
  const unneeded = new AbortController();
  try {
    return await runTool(argv, unneeded.signal);
  } finally {
    unneeded.abort();
  }
}

async function runTool(argv: string[], probeUnneeded: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    param: { type: 'string', short: 'p', multiple: true },
    input: { type: 'string' },
    timeout: { type: 'string' },
    'show-command': { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    ...APPROVAL_OPTIONS,
  }, Infinity);
  const reference = positionals[0];
  if (!reference) throw new UsageError('missing tool name');
  const { scope, name } = parseToolReference(reference);
  if (scope && !['local', 'user', 'global'].includes(scope)) throw new UsageError(`unknown scope "${scope}"`, 'scopes: local, user, global');
  const timeoutMs = parseTimeout(values.timeout);
  const input = argumentsObject(positionals.slice(1), values.input);

  // Printed below, once the tool is known: what concerns it, not every other file's problems.
  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: false, json: true, extraRoots: scope === 'local' ? [] : [reference], scopesOnly: values.config === undefined });
  if (!project) {
    reportDiagnostics(values.json, diagnostics);
    return 1;
  }
  const chosen = project.tools.find((t) => t.spec.name === name && (scope === undefined || (scope === 'local' ? !t.scope : t.scope === scope)));
  // Errors in the tool's own file (it did not load, or another file defines it too).
  const own = errorsByToolName(project, diagnostics).get(name) ?? [];
  // The warnings text mode prints on stderr as it goes, for --json's `warnings` (as forge build and forge validate
  // --json carry theirs), in the document of a run that succeeds and of one that fails.
  const warnings: Diagnostic[] = [];
  const say = (found: readonly Diagnostic[]) => {
    if (values.json) warnings.push(...found.filter((d) => d.severity === 'warning'));
    else printDiagnostics(found);
  };
  const refuse = (found: readonly Diagnostic[], extra?: Record<string, unknown>) => (values.json ? writeFailureJson(true, [...found, ...warnings], extra) : printDiagnostics(found));
  const { concerning, elsewhere } = concerningDiagnostics(project, diagnostics, own, chosen);
  say(concerning);
  if (elsewhere && !values.json) process.stderr.write(`${c.dim(`· ${elsewhere} problem${elsewhere === 1 ? '' : 's'} in other tools' files (forge validate lists them)`)}\n`);
  // Outside a project only the user and global scopes are searched: say so, not "there are no tools to call".
  const noProject = !chosen && scope !== 'user' && scope !== 'global' ? outsideProjectHint(values.config) : undefined;
  if (noProject) {
    refuse([error('FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, {}, noProject)]);
    return 1;
  }
  // A builtin not enabled: what to write, not "no tool named" beside the names of the others.
  if (!chosen && !scope && findCatalogEntry(name)) {
    const message = `"${name}" ships with Forge but is not enabled in this project`;
    const hint = `enable it under tools: in forge.yaml (- ${name}); forge tool describe ${name} shows what it does`;
    refuse([error('FORGE_TOOL_UNKNOWN', message, {}, hint)]);
    return 1;
  }
  if (scope && !chosen) {
    const message = `the ${scope} scope has no tool named "${name}"`;
    if (values.json) refuse([error('FORGE_TOOL_UNKNOWN', message)]);
    else process.stderr.write(`${errColor.red('✘')} ${errColor.dim('FORGE_TOOL_UNKNOWN')} ${message}\n`);
    return 1;
  }
  if (chosen?.unavailable) {
    if (values.json) refuse([error('FORGE_TOOL_PLATFORM', `tool "${name}" ${chosen.unavailable}`)]);
    else process.stderr.write(`${errColor.red('✘')} ${errColor.dim('FORGE_TOOL_PLATFORM')} tool "${name}" ${chosen.unavailable}\n`);
    return 1;
  }

  // Those, or errors in the files of the tools it calls.
  const blocking = [...new Set([...own, ...(chosen ? dependencyErrors(project, diagnostics, chosen) : [])])];
  if (blocking.length) {
    // forge run and forge build stop here too: a tool whose dependencies are missing would fail mid-call.
    if (values.json) refuse(blocking);
    else process.stderr.write(`${errColor.red('✘')} tool "${name}" cannot run: ${own.length ? 'its file has errors' : 'its dependencies have errors'} (above)\n`);
    return 1;
  }
  // Python runs when the tool is Python, runs a python: step, or calls (directly or not) a tool that does.
  const started = chosen ?? project.tools.find((t) => t.spec.name === name);
  const reached = started ? toolsReached(started, project.tools, (t) => t.spec) : [];
  const needsPython = reached.some((t) => runsPython(t.spec));
  // The sandbox's probe (a bubblewrap start) runs while the sources are checked (Python's check is a process too).
  const probing = values['dry-run'] ? undefined : probeEarly(project.config.sandbox?.mode, probeUnneeded);
  // A Python, TypeScript or JavaScript file that does not compile is reported as forge validate reports it
  // (file:line:col and the line), not as the worker's SyntaxError once it has started, nor inside a
  // FORGE_TOOL_START message.
  const { syntax, unbuildable } = await sourceErrors(project, reached);
  // What else the build refuses in those files (an undeclared import this machine happens to have) runs
  // here, but is said: otherwise the tool works under forge tool run and the build is the first to object.
  if (!syntax.length) say(unbuildable.map((d) => ({ ...d, severity: 'warning' as const, hint: `${d.hint ? `${d.hint}; ` : ''}forge build refuses this; forge tool run runs the tool anyway` })));
  if (syntax.length) {
    if (values.json) refuse(syntax);
    else {
      printDiagnostics(syntax);
      const language = syntax.every((d) => d.code === 'FORGE_PY_SYNTAX') ? 'Python ' : '';
      process.stderr.write(`${errColor.red('✘')} tool "${name}" cannot run: ${syntax.length === 1 ? `a ${language}file does` : `${language}files do`} not compile (above)\n`);
    }
    return 1;
  }
  if (needsPython && !(await prepareProjectPython(project.config.root, project.tools, { json: values.json, warnings }))) return 1;

  let approval: ApprovalChoice;
  try {
    approval = approvalFromOptions(project.config.approval, values);
  } catch (err) {
    if (!(err instanceof DiagnosticError)) throw err;
    refuse(err.diagnostics);
    return 2;
  }
  // A rule that matches no tool, as forge build says: a misspelt auto_deny of a tool the project has is refused before anything runs.
  // forge.yaml's rules too: the tool's sub-calls go through them as they would in the agent.
  const inConfig = checkApprovalRules(project.config, project.tools);
  const unmatched = [
    ...inConfig,
    ...unmatchedOptionRules(project.tools.map((t) => t.spec), project.config.emergent !== undefined, { autoApprove: values['auto-approve'], autoDeny: values['auto-deny'] }, CATALOG.map((entry) => entry.name)),
  ];
  if (hasErrors(unmatched)) {
    refuse(unmatched);
    // A mistake in forge.yaml fails as forge run and forge build fail on it; only the command line's own is a usage error.
    return hasErrors(inConfig) ? 1 : 2;
  }
  say(unmatched);
  const shown: ShownCommand[] = [];
  const show = (command: ShownCommand) => {
    shown.push(command);
    if (!values.json) process.stderr.write(renderShown(command) + '\n');
  };
  const workDir = project.config.workDir;
  // Tools report problems found when they start (an allowed binary not installed) as warnings, and so does the
  // runtime (no sandbox, a result unlike its Output). With --json they are the document's warnings, as the
  // project's are: a text line beside the JSON is one a script that reads both streams cannot parse.
  // With --verbose, what a tool prints (its stderr) shows too.
  const log: Logger = {
    debug() {},
    info: values.verbose ? (message) => void process.stderr.write(`${errColor.dim(logText(message))}\n`) : () => {},
    warn: values.json ? (message) => void warnings.push(warning('FORGE_RUNTIME_WARNING', redactSecrets(message))) : (message) => void process.stderr.write(`${errColor.yellow('warning:')} ${logText(message)}\n`),
  };
  // The same sandbox as forge run, forge chat and the bundle: trying a tool here shows the limits it will run under.
  if (!values['dry-run']) {
    try {
      await startToolSandbox(project.config.sandbox, workDir, log, process.env, [project.config.root], probing);
    } catch (err) {
      if (!(err instanceof SandboxRequiredError)) throw err;
      throw sandboxRequiredUsage(err, warnings);
    }
  }
  const { resolved, code } = await resolveProject(project);
  const assembled = await assembleRuntime(resolved, code, {
    log,
    approval: approval.policy,
    onCommand: values['show-command'] ? (e) => show(toShown(e.tool, e.step, e.prepared, workDir)) : undefined,
  });
  if (!assembled.ok) {
    refuse(assembled.diagnostics);
    return 1;
  }
  say(assembled.diagnostics);
  const { registry } = assembled;
  try {
    const tool = registry.get(name);
    const args = { ...input, ...(tool ? parseParams(values.param ?? [], tool.inputSchema) : {}) };
    if (values['dry-run']) return await dryRun(name, args, registry, values, show, shown, warnings);

    // The person at the command line: every session's forged tools are theirs to run.
    const interrupt = interruptible();
    let result: ToolResult;
    try {
      result = await registry.execute(name, args, { timeoutMs, approver: approval.approver, approved: true, sees: 'everything', signal: interrupt.signal });
    } finally {
      interrupt.disarm();
    }
    const stoppedBy = interrupt.received();
    if (stoppedBy) result = interrupted(name, result.durationMs, stoppedBy);
    const commands = values['show-command'] ? { commands: shown } : {};
    // A tool that threw: the line of the project's code it threw from, where its failure is placed (text and --json) like a compiler's error.
    const at = result.ok ? undefined : toolFailureLocation(result.error.details, project.config.toolDirs.map((d) => d.absolute));
    if (values.json) {
      // A failed call in the shape every command fails with.
      process.stdout.write(jsonDocument(result.ok ? { ...result, warnings: warnings.map(diagnosticJson), ...commands } : toolFailureJson(result, at ?? {}, commands, warnings)));
    } else if (result.ok) {
      process.stdout.write((typeof result.value === 'string' ? result.value : JSON.stringify(result.value, null, 2)) + '\n');
      if (values.verbose) process.stderr.write(c.dim(`${name} finished in ${formatMs(result.durationMs ?? 0)}\n`));
    } else {
      const e = result.error;
      // Its traceback (or stack) with --verbose.
      const trace = tracebackKind(e.details);
      // Run from a subdirectory, a path given as the shell sees it names another file (or none) in the work dir.
      const hint = workDirPathHint(args, process.cwd(), workDir) ?? e.hint ?? (trace && !values.verbose ? `--verbose shows the ${trace}` : undefined);
      // A failure's text is often someone else's: a service's error body, a tool's stderr tail.
      printDiagnostics([error(e.code, terminalText(e.message), at ? { ...at, lineText: at.lineText === undefined ? undefined : terminalText(at.lineText) } : {}, hint === undefined ? undefined : terminalText(hint))]);
      if (values.verbose && e.details) process.stderr.write(`${errColor.dim(terminalText(e.details))}\n`);
    }
    return stoppedBy ? 128 + STOP_SIGNALS[stoppedBy] : result.ok ? 0 : 1;
  } finally {
    await assembled.close();
  }
}

/**
 * Ctrl-C (SIGINT) while the tool runs, or SIGTERM or SIGHUP: the call is cancelled, which stops the tool's
 * process tree (a worker runs in its own process group, out of the terminal's reach, and any signal's default
 * would end this process and leave it running), and the command reports it and exits 128 + the signal's number
 * (130 for Ctrl-C) instead of dying with nothing printed (no JSON for a script to read). Once only: a second
 * signal, while the command closes, ends it at once.
 */
function interruptible(): { signal: AbortSignal; received(): StopSignal | undefined; disarm(): void } {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  const listeners = STOP_SIGNAL_NAMES.map((name) => {
    const listener = () => {
      disarm();
      received = name;
      controller.abort(new Error(`interrupted (${name})`));
    };
    process.on(name, listener);
    return [name, listener] as const;
  });
  const disarm = () => {
    for (const [name, listener] of listeners) process.off(name, listener);
  };
  return { signal: controller.signal, received: () => received, disarm };
}

/** The answer of a call a signal cancelled, whatever the tool's own answer was by then. */
function interrupted(name: string, durationMs: number | undefined, signal: StopSignal): ToolResult {
  const how = signal === 'SIGINT' ? 'Ctrl-C, SIGINT' : signal;
  const hint = `the run was interrupted (${how}) and the tool stopped; run it again, with --timeout (30s) to bound how long it may take`;
  return { ...fail('FORGE_TOOL_CANCELLED', `tool "${name}" was interrupted`, hint), ...(durationMs !== undefined ? { durationMs } : {}) };
}

/**
 * What concerns the tool asked for: forge.yaml's diagnostics, those of the tool's file and of the files of
 * the tools it calls; the other files' problems are counted (`forge validate` lists them). A tool that is
 * not there (or whose file does not load) gets everything: any of it may say why.
 */
function concerningDiagnostics(project: Project, diagnostics: readonly Diagnostic[], own: readonly Diagnostic[], chosen: ProjectTool | undefined): { concerning: Diagnostic[]; elsewhere: number } {
  if (!chosen || own.length) return { concerning: [...diagnostics], elsewhere: 0 };
  const files = filesReached(project, chosen);
  const toolDirs = project.config.toolDirs.map((d) => d.absolute + '/');
  const elsewhere = (d: Diagnostic) => d.file !== undefined && !files.has(d.file) && !files.has(resolve(d.file)) && toolDirs.some((dir) => resolve(project.config.root, d.file!).startsWith(dir));
  return { concerning: diagnostics.filter((d) => !elsewhere(d)), elsewhere: diagnostics.filter(elsewhere).length };
}

/** The sandbox's probe, started now, unless the sandbox is off (or FORGE_SANDBOX names no mode: startToolSandbox says so in its place). */
function probeEarly(configured: Parameters<typeof sandboxMode>[0], unneeded: AbortSignal): Promise<SandboxProbe> | undefined {
  try {
    if (sandboxMode(configured, process.env).mode === 'off') return undefined;
  } catch {
    return undefined;
  }
  const probing = probeSandbox(process.env, unneeded);
  probing.catch(() => {});
  return probing;
}

/**
 * The source check's errors in the code files of the tools a run reaches (the tool and those it calls):
 * FORGE_PY_SYNTAX and FORGE_SYNTAX (a file that does not compile), and the others the build refuses.
 */
async function sourceErrors(project: Project, reached: readonly ProjectTool[]): Promise<{ syntax: Diagnostic[]; unbuildable: Diagnostic[] }> {
  const files = [...new Map(reached.flatMap((t) => (t.file && ['python', 'typescript', 'javascript'].includes(t.file.kind) ? [[t.file.absolute, t.file] as const] : []))).values()];
  if (!files.length) return { syntax: [], unbuildable: [] };
  // The Python packages declared as forge validate and the build read them (the project's files and requirements.txt),
  // looked through only when a Python file is reached: a TS tool's run need not go through every Python file of a large project.
  const python = project.files.filter((f) => !f.scope && f.kind === 'python');
  const dependencies = files.some((f) => f.kind === 'python') ? collectPythonDependencies(project.config.root, python, process.cwd()).dependencies : undefined;
  const found = await checkSources({ root: project.config.root, files, toolDirs: project.config.toolDirs.map((d) => d.absolute), dependencies, cwd: process.cwd(), scripts: true });
  const isSyntax = (d: Diagnostic) => d.code === 'FORGE_PY_SYNTAX' || d.code === 'FORGE_SYNTAX';
  return { syntax: found.filter(isSyntax), unbuildable: found.filter((d) => !isSyntax(d) && d.severity === 'error') };
}

/** Errors reported in the files of the tool or of any tool it calls, directly or not (a missing or unsatisfied dependency). */
function dependencyErrors(project: Project, diagnostics: readonly Diagnostic[], tool: ProjectTool): Diagnostic[] {
  const files = filesReached(project, tool);
  return diagnostics.filter((d) => d.severity === 'error' && d.file !== undefined && (files.has(d.file) || files.has(resolve(d.file))));
}

/** The files of the tool and of every tool it calls, directly or not, as diagnostics name them. */
function filesReached(project: Project, tool: ProjectTool): Set<string> {
  const files = toolsReached(tool, project.tools, (t) => t.spec).flatMap((t) => (t.file ? [t.file.absolute, t.file.display, t.file.relative] : []));
  return new Set(files);
}

/** Checks the arguments (with defaults) and shows what would run, running nothing. */
async function dryRun(
  name: string,
  args: Record<string, unknown>,
  registry: ToolRegistry,
  values: { json: boolean; 'show-command': boolean },
  show: (command: ShownCommand) => void,
  shown: ShownCommand[],
  warnings: readonly Diagnostic[],
): Promise<number> {
  const tool = registry.get(name);
  const { checkArguments } = await import('../../runtime/tools/validation.ts');
  const { checkedInputSchema } = await import('../../runtime/tools/local-schema.ts');
  const checked = tool ? checkArguments(checkedInputSchema(tool), args) : undefined;
  // The same code, words and hint as the call itself would answer with.
  const problem = !tool
    ? error('FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, {}, unknownToolHint(name, registry.list().map((t) => t.name)))
    : !checked!.ok
      ? error('FORGE_TOOL_ARGS', `invalid arguments for "${name}": ${checked!.errors.join('; ')}`, {}, argumentsHint(checkedInputSchema(tool)))
      : undefined;
  if (problem) {
    if (values.json) writeFailureJson(true, [problem, ...warnings], { dryRun: true });
    else printDiagnostics([problem]);
    return 1;
  }
  if (values['show-command'] && isYamlTool(tool)) {
    for (const planned of tool.plan(checked!.args as Record<string, unknown>)) {
      show(toShown(name, planned.step, planned.prepared, registry.workDir, { when: planned.when, problem: planned.problem }));
    }
  }
  if (values.json) process.stdout.write(JSON.stringify({ ok: true, dryRun: true, args: checked!.args, warnings: warnings.map(diagnosticJson), ...(values['show-command'] ? { commands: shown } : {}) }, null, 2) + '\n');
  else process.stdout.write(`${c.green('✓')} the arguments are valid for ${name}; nothing was run (--dry-run)\n`);
  return 0;
}

const ARGUMENTS_HINT = "give a tool's arguments as one JSON object after its name, with --input JSON, or with --param K=V";

/** The tool's arguments given as JSON: after its name (as `runtime.mjs call NAME JSON` takes them) or with --input, not both. */
function argumentsObject(rest: string[], option: string | undefined): Record<string, unknown> {
  // A word that is not JSON is most often the rest of an unquoted value (--param text=two words).
  if (rest.length && !/^\s*[[{]/.test(rest[0])) throw new UsageError(`unexpected argument "${rest[0]}"`, `${ARGUMENTS_HINT}; quote a value that has spaces`);
  if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}"`, `${ARGUMENTS_HINT}; quote a value that has spaces`);
  if (rest.length && option !== undefined) throw new UsageError('the arguments are given twice: as JSON after the tool name and with --input', ARGUMENTS_HINT);
  const [text, where] = rest.length ? [rest[0], 'the argument after the tool name'] : [option, '--input'];
  if (text === undefined) return {};
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${where} is not valid JSON: ${(err as Error).message}`, ARGUMENTS_HINT);
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new UsageError(`${where} must be a JSON object`, ARGUMENTS_HINT);
  return input as Record<string, unknown>;
}
