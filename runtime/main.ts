/**
 * The entry point of a built bundle: `node runtime.mjs <command>`. The
 * commands are listed once, in USAGE below (what `help` prints); the two
 * not listed there are internal: `__worker NAME` serves a TS/JS tool's
 * calls, and `__warm` is the Dockerfile's step that fills the code caches
 * while the image is built.
 *
 * The build generates a small module that imports this file, the enabled
 * builtin tools and the TypeScript tools, and calls run() with them.
 */
import { workDirProblem } from './work-dir.ts';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseArgsProblem } from './parse-args-problem.ts';
import { codedLine, error, ForgeError, formatDiagnostic, warning, type Diagnostic } from './diagnostics.ts';
import { diagnosticJson, jsonDocument, toolFailureJson, writeFailureJson } from './failure-json.ts';
import { exitQuietlyOnClosedPipe } from './closed-pipe.ts';
import type { AgentManifest } from './manifest.ts';
import { readManifest } from './manifest-read.ts';
import { nodeLineWarning } from './node-lines.ts';
import type { AdapterModules } from './tools/adapters/adapter-runtime.ts';
import type { BuiltinDefinition } from './tools/builtin/define.ts';
import type { Logger } from './tools/model.ts';
import type { SandboxProbe } from './exec/sandbox-probe.ts';
import type { CoreCodeCache } from './core-loader.ts';
import { serveToolWorker } from './tools/custom/node-worker-host.ts';
import { jsonLogger, type CodedProblem } from './telemetry/json-logger.ts';
import { parseTimeoutOption, TIMEOUT_OPTION_FORMS } from './duration.ts';
import type { YamlToolFactory } from './tools/yaml/load-yaml-tool.ts';
import type { YamlToolHost } from './tools/yaml/yaml-tool.ts';
import { unknownToolHint } from './tools/unknown-tool.ts';
import { didYouMean } from './suggest.ts';
import { ownValue } from './own-value.ts';
import { tracebackKind } from './tools/traceback-kind.ts';
import { logText } from './telemetry/log-text.ts';
import { redactSecrets } from './known-secrets.ts';
import { terminalLine, terminalText } from './telemetry/terminal-text.ts';

export interface BundleContents {
  builtins: Record<string, BuiltinDefinition<any>>;
  /** TypeScript/JavaScript tools that export execute(), compiled into the bundle. */
  nodeTools: Record<string, () => Promise<Record<string, unknown>>>;
  /** URL of the bundle file itself (import.meta.url of runtime.mjs). */
  bundleUrl: string;
  /** The adapter modules the agent uses (MCP, OpenAPI); absent when it uses none. */
  adapters?: AdapterModules;
  /** Present when the agent has YAML tools (it brings the YAML parser). */
  yamlTools?: (host: YamlToolHost) => YamlToolFactory;
  /** The core's code cache (core-loader.ts): run() writes it once the command has started its work, if it was not used. */
  codeCache?: CoreCodeCache;
}

const USAGE = `usage: node runtime.mjs <command>

commands:
  serve [--host H] [--port P] [--no-auth] [--public-url URL] [--log-format text|json]
                                      run the agent: A2A, MCP (/mcp), REST (/tools), /healthz, /metrics
  --stdio                             serve the tools over MCP on stdin/stdout
  tools [--json]                      list the agent's tools
  describe NAME                       print a tool's spec as JSON
  verify [--json]                     check the bundle against checksums.json (and its signature with FORGE_VERIFY_KEY)
  call NAME [JSON] [--timeout T] [--json]
                                      run a tool with JSON arguments and print its result
  doctor [--json]                     check the tool sandbox, memory caps, work dir and secrets here

approval (for the tools a composed tool calls; the tool you name is yours to run):
  --yes                               approve every call that would ask (auto-deny rules still refuse)
  --auto-approve RULE, --auto-deny RULE
                                      extra rules: tag:read, name:file_read, category:custom, globs
  without --yes, calls that need confirmation are asked on the terminal, or refused without one

options:
  --workdir DIR                       the directory tools work in (default: FORGE_WORKDIR, else forge.yaml's
                                      workdir: relative to the current directory)

environment:
  FORGE_AUTH_TOKEN                    the bearer token clients must send (default: generated into a 0600 file
                                      outside the work dir, printed once)
  FORGE_AUTH_TOKEN_FILE               a file holding the token (a mounted secret)
  <api_key_env>_FILE                  a file holding the model's key (e.g. OPENAI_API_KEY_FILE)
  FORGE_SANDBOX                       off | auto | required: overrides forge.yaml's sandbox mode
  FORGE_STATE_URL                     file: (default, one process) or postgres://... shared by replicas
  FORGE_TASK_RETENTION                how long postgres keeps a finished A2A task (default 30d; off keeps them)
  FORGE_CONVERSATION_RETENTION        delete conversations no turn saved for this long (e.g. 90d; default off)
  FORGE_PUBLIC_URL                    the URL the agent card advertises (required with a shared store)
  FORGE_DRAIN_DELAY, FORGE_SHUTDOWN_GRACE
                                      on SIGTERM: /readyz 503 this long while serving, then finish within the grace
  FORGE_MCP_SESSIONS=stateful         keep MCP sessions in this process (default: stateless, any replica answers)
  PORT, FORGE_HOST                    where serve listens (flags win)
  FORGE_VERIFY_KEY                    an Ed25519 public key (PEM or file): serve and verify require a valid signature
  FORGE_VERIFY=off                    serve without checking the bundle against checksums.json
  FORGE_CODE_CACHE=off                compile the runtime without the code cache in .code-cache/ (written at the
                                      first start; never used with FORGE_VERIFY_KEY)
  FORGE_VERBOSE=1                     print stack traces, and the traceback of a tool a call failed in
`;

/** Log lines go to stderr: stdout belongs to results and, under --stdio, to the protocol. */
export const stderrLogger: Logger = {
  debug: (m) => process.env.FORGE_VERBOSE && process.stderr.write(`[forge] ${logText(m)}\n`),
  info: (m) => process.stderr.write(`[forge] ${logText(m)}\n`),
  warn: (m) => process.stderr.write(`[forge] warning: ${logText(m)}\n`),
};

export async function main(contents: BundleContents, argv = process.argv.slice(2)): Promise<number> {
  let [command, ...rest] = argv;
  if (command === '__worker') return startToolWorker(contents, rest[0]);
  if (command === '--stdio') command = 'stdio';
  // A command that prints and ends (tools, describe, call, help…) may be piped into `head`.
  if (command !== 'serve' && command !== 'stdio') exitQuietlyOnClosedPipe();
  const invocation = parseInvocation(command, rest);
  if (typeof invocation === 'number') return invocation;
  try {
    return await runInvocation(contents, invocation);
  } catch (err) {
    // In the log's format: with --log-format json, a failure to start (a port in use) is one JSON line too.
    // An expected failure (a port in use) keeps its code and hint, as forge's diagnostics do; no stack.
    const coded = err instanceof ForgeError ? err : undefined;
    writeFailureJson(invocation.values.json, [coded ? error(coded.code, coded.message, {}, coded.hint) : error('FORGE_INTERNAL', redactSecrets((err as Error).message), {}, 'FORGE_VERBOSE=1 shows the stack trace')]);
    if (coded && invocation.logFormat !== 'json') invocation.problem(`error: ${coded.code} ${coded.message}${coded.hint ? `\nhint: ${coded.hint}` : ''}`);
    else invocation.problem(`forge runtime: ${coded ? codedLine(coded) : (err as Error).message}`, 'error', coded);
    if (invocation.logFormat === 'json') invocation.log.debug(`${(err as Error).stack}`);
    else if (process.env.FORGE_VERBOSE) process.stderr.write(`${redactSecrets(String((err as Error).stack))}\n`);
    return 1;
  }
}

async function runInvocation(contents: BundleContents, invocation: Invocation): Promise<number> {
  const { command } = invocation;
  if (command === 'serve' || command === 'stdio') {
    // Once, where a long-lived agent starts (not on every `call`), and not before a wrong command line's
    // complaint; through the logger, so that it is a JSON line with --log-format json.
    const lineWarning = nodeLineWarning();
    if (lineWarning) invocation.log.warn(lineWarning);
  }
  const bundle = await openBundle(contents, invocation);
  if (typeof bundle === 'number') return bundle;
  if (command === 'doctor') return doctorCommand(bundle);
  const runtime = await startRuntime(contents, bundle);
  if (typeof runtime === 'number') return runtime;
  if (command === 'serve') return serveCommand(runtime);
  if (command === 'stdio') return stdioCommand(runtime);
  try {
    switch (command) {
      case 'tools':
        return toolsCommand(runtime);
      case 'describe':
        return describeCommand(runtime);
      case 'call':
        return await callCommand(runtime);
      case '__warm':
        return await warmCommand(runtime);
      default:
        throw new Error(`the command "${command}" is in ARGUMENTS_TAKEN but has no handler`);
    }
  } finally {
    await runtime.close();
    await (await import('./state/active-state.ts')).closeOpenedStates();
  }
}

/** `__worker NAME`: serves one bundled TS/JS tool's calls on stdin/stdout until stdin closes. */
function startToolWorker(contents: BundleContents, name: string | undefined): number {
  const load = name === undefined ? undefined : contents.nodeTools[name];
  if (!load) {
    process.stderr.write(`no bundled tool named "${name}"\n`);
    return 2;
  }
  serveToolWorker(load);
  return -1; // keeps running until stdin closes
}

interface Invocation {
  command: string;
  values: ParsedValues;
  /** serve's --port, else PORT; checked before anything starts. */
  port: number | undefined;
  /** call's --timeout, checked likewise. */
  timeoutMs: number | undefined;
  positionals: string[];
  logFormat: string | undefined;
  log: Logger;
  /** What the server shows the person on purpose (a token it generated): written as it is, unmasked. */
  announce(line: string): void;
  /** A command's own complaint (a refusal to start, a missing directory): as it is, or one JSON line with --log-format json. */
  problem(text: string, level?: 'error' | 'warn', about?: CodedProblem): void;
  /**
   * `call --json` (a text log): what the runtime warns of as it starts and runs the tool, kept for the document's
   * `warnings` as forge tool run --json keeps them, not printed beside it. Undefined otherwise: printed.
   */
  warnings?: Diagnostic[];
}

type ParsedValues = ReturnType<typeof parseCommandLine>['values'];

const COMMAND_LINE_OPTIONS = {
  json: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  workdir: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'no-auth': { type: 'boolean', default: false },
  'public-url': { type: 'string' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  'auto-approve': { type: 'string', multiple: true },
  'auto-deny': { type: 'string', multiple: true },
} as const;

function parseCommandLine(rest: string[]) {
  return parseArgs({ args: rest, allowPositionals: true, options: COMMAND_LINE_OPTIONS });
}

/** parseArgs's complaint as forge's CLI words its own: the option, a near one, and where `call` takes its arguments. */
function usageProblem(err: unknown, command: string | undefined): UsageProblem {
  const problem = parseArgsProblem(err, Object.keys(COMMAND_LINE_OPTIONS));
  const hint = command === 'call' && problem.unknownOption ? "call takes the tool's arguments as JSON after its name: node runtime.mjs call NAME '{\"key\": \"value\"}'" : problem.hint;
  return { message: problem.message, hint };
}

interface UsageProblem {
  message: string;
  hint?: string;
}

/** The commands, and the arguments each takes besides its options (none unless said). */
const ARGUMENTS_TAKEN: Record<string, { count: number; what?: string }> = {
  serve: { count: 0 },
  stdio: { count: 0 },
  tools: { count: 0 },
  verify: { count: 0 },
  doctor: { count: 0 },
  describe: { count: 1, what: 'a tool name' },
  call: { count: 2, what: "a tool name and the tool's arguments as one JSON object" },
  // Internal (not in USAGE): the Dockerfile's warm-up step.
  __warm: { count: 0 },
};

/**
 * A wrong command line: the problem, then the command's own lines of USAGE (the list of commands when
 * there is no such command), and where the rest is. The whole usage (about 40 lines) pushed the
 * problem off a small screen. Exit code 2.
 */
function usageError(problem: UsageProblem, command: string | undefined, json: boolean): number {
  // With --json a script gets the failure on stdout as every command's; the synopsis stays on stderr for a person.
  writeFailureJson(json, [error('FORGE_USAGE', problem.message, {}, problem.hint)]);
  const commands = USAGE.slice(USAGE.indexOf('commands:\n'), USAGE.indexOf('\n\n', USAGE.indexOf('commands:\n'))).split('\n');
  const own = commands.findIndex((line) => line.startsWith(`  ${command === 'stdio' ? '--stdio' : command} `));
  let end = own + 1;
  while (own >= 0 && end < commands.length && commands[end].startsWith('      ')) end++;
  const lines = own >= 0 ? commands.slice(own, end) : commands;
  // "error:" as the bundle's other failures and forge's own usage errors begin.
  process.stderr.write(`error: ${problem.message}${problem.hint ? `\n  hint: ${problem.hint}` : ''}\n\n${lines.join('\n')}\n\nfor more, run: node runtime.mjs help\n`);
  return 2;
}

/** The command line, or the exit code when it asks for help or is wrong. */
function parseInvocation(command: string | undefined, rest: string[]): Invocation | number {
  let parsed;
  try {
    parsed = parseCommandLine(rest);
  } catch (err) {
    return usageError(usageProblem(err, command), command, rest.includes('--json'));
  }
  if (!command || command === 'help' || command === '--help' || parsed.values.help) {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  // Before the bundle is opened: a mistyped command starts nothing.
  const takes = ownValue(ARGUMENTS_TAKEN, command);
  if (!takes) {
    const meant = didYouMean(command, [...Object.keys(ARGUMENTS_TAKEN).filter((c) => c !== 'stdio' && !c.startsWith('__')), 'help']);
    return usageError({ message: `unknown command "${command}"`, ...(meant ? { hint: meant } : {}) }, undefined, parsed.values.json);
  }
  if (parsed.positionals.length > takes.count) {
    // Never dropped: an unquoted JSON argument with a space arrives as two, and half of it would run.
    const hint = `${command} takes ${takes.what ?? 'no arguments besides its options'}; quote an argument that has spaces`;
    return usageError({ message: `unexpected argument "${parsed.positionals[takes.count]}"`, hint }, command, parsed.values.json);
  }
  // First: every later complaint is written in the format asked for.
  const logFormat = parsed.values['log-format'] ?? process.env.FORGE_LOG_FORMAT;
  if (logFormat !== undefined && logFormat !== 'text' && logFormat !== 'json') {
    const message = `--log-format must be text or json, not "${logFormat}"`;
    writeFailureJson(parsed.values.json, [error('FORGE_USAGE', message)]);
    process.stderr.write(`${message}\n`);
    return 2;
  }
  const json = logFormat === 'json' ? jsonLogger((line) => process.stderr.write(line), { verbose: Boolean(process.env.FORGE_VERBOSE) }) : undefined;
  const warnings: Diagnostic[] | undefined = command === 'call' && parsed.values.json && !json ? [] : undefined;
  const log = json ?? (warnings ? { ...stderrLogger, warn: (m: string) => void warnings.push(warning('FORGE_RUNTIME_WARNING', redactSecrets(m))) } : stderrLogger);
  const problem = json
    ? (text: string, level: 'error' | 'warn' = 'error', about?: CodedProblem) => (level === 'error' ? json.error(text, about) : json.warn(text))
    : (text: string) => void process.stderr.write(`${redactSecrets(text)}\n`);
  let port: number | undefined;
  let timeoutMs: number | undefined;
  try {
    // An empty PORT is unset (a platform may export it so); an empty --port is a mistake.
    if (command === 'serve') port = parsed.values.port !== undefined ? parsePort(parsed.values.port, '--port') : process.env.PORT?.trim() ? parsePort(process.env.PORT.trim(), 'PORT') : undefined;
    if (command === 'call' && parsed.values.timeout !== undefined) timeoutMs = parseMilliseconds(parsed.values.timeout, '--timeout');
  } catch (err) {
    writeFailureJson(parsed.values.json, [error('FORGE_USAGE', (err as Error).message)]);
    problem(json ? (err as Error).message : `error: ${(err as Error).message}`);
    return 2;
  }
  const announce = (line: string) => (json ? json.shown(line) : void process.stderr.write(`${line}\n`));
  return { command, values: parsed.values, port, timeoutMs, positionals: parsed.positionals, logFormat, log, announce, problem, ...(warnings ? { warnings } : {}) };
}

interface OpenedBundle extends Invocation {
  bundleFile: string;
  manifest: AgentManifest;
  /** agent.json's path and text, to place a problem found in it. */
  manifestFile: string;
  manifestText: string;
  workDir: string;
  /** The sandbox probe, started before verification (commands that run tools). */
  probing?: Promise<SandboxProbe>;
  /** Where `serve` listens (--host, FORGE_HOST, forge.yaml's server.host, or 127.0.0.1). An empty FORGE_HOST is unset, as PORT: Node would listen on every interface. */
  host?: string;
  assembleRuntime: typeof import('./assemble.ts').assembleRuntime;
  bundleCodeSource: typeof import('./bundle-code.ts').bundleCodeSource;
}

const runsTools = (command: string) => command === 'serve' || command === 'stdio' || command === 'call';

/** The bundle checked against its checksums, its agent.json read, and the work dir decided. */
async function openBundle(contents: BundleContents, invocation: Invocation): Promise<OpenedBundle | number> {
  const { command } = invocation;
  // The sandbox probe runs bwrap (a system program, not bundle code): started now, its run
  // overlaps verifying and loading the bundle.
  const probing = runsTools(command) && process.env.FORGE_SANDBOX !== 'off' ? (await import('./exec/sandbox-probe.ts')).probeSandbox(process.env) : undefined;
  probing?.catch(() => {});

  // The bundle must be the one that was built before it serves anything.
  const verified = (await import('./verify/verify-command.ts')).verifyAtStart(fileURLToPath(contents.bundleUrl), command, process.env, invocation, invocation.values.json);
  if (verified !== undefined) return verified;

  // Loaded here, not at the top: a tool worker (`__worker`) never needs the
  // registry, ajv, the HTTP client or the adapters, and starts sooner without them.
  const [{ assembleRuntime }, { bundleCodeSource }, { LOOPBACK_HOSTS }, { publicUrlProblem, publicUrlSetting }] = await Promise.all([
    import('./assemble.ts'),
    import('./bundle-code.ts'),
    import('./server/auth.ts'),
    import('./server/public-url.ts'),
  ]);
  const bundleFile = fileURLToPath(contents.bundleUrl);
  const manifestFile = join(dirname(bundleFile), 'agent.json');
  const manifestText = readFileSync(manifestFile, 'utf8');
  const read = readManifest(manifestText, relative(process.cwd(), manifestFile) || manifestFile);
  if ('problem' in read) {
    writeFailureJson(invocation.values.json, [read.problem]);
    invocation.problem(formatDiagnostic(read.problem), 'error', read.problem);
    return 1;
  }
  const { manifest } = read;
  // A usage mistake is said before what the machine lacks (Python packages, a work dir): it is the first thing to fix.
  const host = command === 'serve' ? (invocation.values.host ?? (process.env.FORGE_HOST?.trim() || undefined) ?? manifest.server?.host ?? '127.0.0.1') : undefined;
  if (host !== undefined && invocation.values['no-auth'] && !LOOPBACK_HOSTS.has(host)) {
    const refusal = { message: `--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost), not ${host}`, hint: 'serve on 127.0.0.1, or drop --no-auth and give clients FORGE_AUTH_TOKEN' };
    // The host may come from FORGE_HOST or forge.yaml: with --log-format json it is one JSON line, as every other complaint of serve's.
    if (invocation.logFormat === 'json') {
      // Its code and hint as fields of their own, as the refusals found once serve has started are.
      invocation.problem(`FORGE_SERVE_CONFIG ${refusal.message} (${refusal.hint})`, 'error', { code: 'FORGE_SERVE_CONFIG', hint: refusal.hint });
      return 2;
    }
    return usageError(refusal, command, invocation.values.json);
  }
  const urlProblem = command === 'serve' ? publicUrlProblem(publicUrlSetting(invocation.values['public-url'], process.env)) : undefined;
  if (urlProblem) {
    if (invocation.logFormat === 'json') {
      invocation.problem(`FORGE_SERVE_CONFIG ${urlProblem}`, 'error', { code: 'FORGE_SERVE_CONFIG' });
      return 2;
    }
    return usageError({ message: urlProblem }, command, invocation.values.json);
  }
  // Declared Python packages must be there before a tool can need them; `call` needs them only when its tool reaches Python.
  if (manifest.python && runsTools(command) && (command !== 'call' || (await callReachesPython(manifest, invocation.positionals[0])))) {
    const { checkPythonDependencies, requirementsFileShown } = await import('./tools/custom/python-dependencies-check.ts');
    const missing = await checkPythonDependencies(manifest.python, requirementsFileShown(dirname(bundleFile)));
    if (missing) {
      writeFailureJson(invocation.values.json, [missing]);
      invocation.problem(formatDiagnostic(missing), 'error', missing);
      return 1;
    }
  }
  // The same boundary `forge run` uses: forge.yaml's workdir:, here relative to where the bundle is run.
  const workDir = resolve(invocation.values.workdir ?? process.env.FORGE_WORKDIR ?? manifest.workdir ?? '.');
  // Not made here: a mistyped --workdir would start an agent on an empty directory (doctor says so too).
  const workDirMissing = runsTools(command) ? workDirProblem(workDir) : undefined;
  if (workDirMissing) {
    const missing = error('FORGE_WORKDIR_MISSING', `the working directory ${workDirMissing}`, {}, "create it, or point --workdir, FORGE_WORKDIR or forge.yaml's workdir at an existing directory");
    writeFailureJson(invocation.values.json, [missing]);
    invocation.problem(formatDiagnostic(missing), 'error', missing);
    return 1;
  }
  return { ...invocation, bundleFile, manifest, manifestFile, manifestText, workDir, host, probing, assembleRuntime, bundleCodeSource };
}

/** The tool `call` runs is Python, runs a python: step, or calls one that does (a name no tool has: no, the call reports it). */
async function callReachesPython(manifest: AgentManifest, name: string | undefined): Promise<boolean> {
  const start = manifest.tools.find((t) => t.name === name);
  if (!start) return false;
  const { toolsReached, runsPython } = await import('./tools/reach.ts');
  return toolsReached(start, manifest.tools, (t) => t).some(runsPython);
}

async function doctorCommand({ manifest, workDir, values, bundleFile }: OpenedBundle): Promise<number> {
  const [{ doctor, formatDoctor }, { doctorJson }] = await Promise.all([import('./doctor.ts'), import('./doctor-json.ts')]);
  // Where the agent is deployed: a model key not set fails (every message would).
  const report = await doctor(manifest, workDir, process.env, { bundleDir: dirname(bundleFile), missingModelKey: 'fail' });
  process.stdout.write(values.json ? jsonDocument(doctorJson(report)) : formatDoctor(report));
  return report.ok ? 0 : 1;
}

type StartedRuntime = OpenedBundle & Extract<Awaited<ReturnType<typeof import('./assemble.ts').assembleRuntime>>, { ok: true }>;

/** The tool sandbox installed (for commands that run tools) and the runtime assembled from agent.json. */
async function startRuntime(contents: BundleContents, bundle: OpenedBundle): Promise<StartedRuntime | number> {
  const { command, log, manifest, workDir, bundleFile, values } = bundle;
  if (runsTools(command)) {
    const { startToolSandbox, describeSandbox } = await import('./exec/start-sandbox.ts');
    const { SandboxRequiredError } = await import('./exec/tool-sandbox.ts');
    try {
      const status = await startToolSandbox(manifest.sandbox, workDir, log, process.env, [dirname(bundleFile), ...(await import('./tools/custom/python-dependencies-check.ts')).pythonEnvironmentDirs(process.env)], bundle.probing);
      if (command === 'serve') log.info(describeSandbox(status));
      // Loaded only for an agent with a stdio MCP server, the one process that starts before the secrets are read.
      if (manifest.mcp?.servers.some((s) => s.transport === 'stdio')) (await import('./secrets-ahead.ts')).hideSecretsBeforeServers(manifest, process.env, workDir);
    } catch (err) {
      if (!(err instanceof SandboxRequiredError)) throw err;
      const hint = err.hint ?? 'install bubblewrap and allow namespaces here (see `node runtime.mjs doctor`), or set sandbox: auto in forge.yaml';
      writeFailureJson(values.json, [error('FORGE_SANDBOX_REQUIRED', err.message, {}, hint), ...(bundle.warnings ?? [])]);
      bundle.problem(`error: ${err.message}\nhint: ${hint}`);
      return 1;
    }
  }
  // A rule that matches none of the agent's tools, as forge tool run and forge build say: a misspelt --auto-deny of one of them is refused before anything runs.
  // agent.json's own rules too, as the build checked forge.yaml's: the bundle runs agent.json as it finds it.
  const [{ unmatchedOptionRules }, { checkManifestApproval }] = await Promise.all([import('./tools/unmatched-rules.ts'), import('./tools/manifest-approval-check.ts')]);
  const inManifest = checkManifestApproval(manifest, relative(process.cwd(), bundle.manifestFile) || bundle.manifestFile, bundle.manifestText);
  const unmatched = [
    ...inManifest,
    ...unmatchedOptionRules(manifest.tools, manifest.emergent !== undefined, { autoApprove: values['auto-approve'], autoDeny: values['auto-deny'] }),
  ];
  // A warning call --json keeps for its document; the rest is said now.
  const say = (d: Diagnostic) => (d.severity === 'warning' && bundle.warnings ? void bundle.warnings.push(d) : bundle.problem(formatDiagnostic(d), d.severity === 'error' ? 'error' : 'warn'));
  // A refusal's document: its errors, and every warning so far (those kept), or what it found.
  const refusal = (found: readonly Diagnostic[]) => (bundle.warnings ? [...found.filter((d) => d.severity === 'error'), ...bundle.warnings] : found);
  unmatched.forEach(say);
  if (unmatched.some((d) => d.severity === 'error')) {
    writeFailureJson(values.json, refusal(unmatched));
    // A mistake in agent.json is the bundle's, not the command line's: a usage error (2) only for --auto-approve/--auto-deny.
    return inManifest.some((d) => d.severity === 'error') ? 1 : 2;
  }
  const built = await bundle.assembleRuntime({ manifest, workDir }, bundle.bundleCodeSource(contents, bundleFile), {
    log,
    rules: { autoApprove: values['auto-approve'], autoDeny: values['auto-deny'] },
    // Start-up connects the MCP servers; `describe` and `__warm` only read agent.json, and `call` needs only those its tool reaches.
    connect: command !== 'describe' && command !== '__warm',
    ...(command === 'call' && bundle.positionals[0] ? { connectFor: bundle.positionals[0] } : {}),
  });
  built.diagnostics.forEach(say);
  if (!built.ok) {
    writeFailureJson(values.json, refusal(built.diagnostics));
    return built.usage ? 2 : 1;
  }
  return { ...bundle, ...built };
}

/**
 * `__warm` (internal; the Dockerfile's step while the image is built): compiles what a container's serve
 * compiles as it starts and meets its first requests, with none of a start's side effects (no sandbox
 * probed, no MCP server reached, no state written, nothing listened on), so that the code caches it
 * writes as it ends hold that, not only the core's top level (README: "The runtime core compiled once per
 * bundle and Node" has the figures). Its steps are best effort: one that fails (a tool schema the validator cannot compile, which a call
 * reports as FORGE_SCHEMA_INVALID) warms less and does not fail the image's build. A bundle serve would
 * refuse to start (its agent.json unreadable, its runtime not assembled) fails it, as serve would fail.
 */
async function warmCommand({ registry, bundleFile }: StartedRuntime): Promise<number> {
  const step = (work: () => unknown) => {
    try {
      work();
    } catch {
      // Compiled as far as it got.
    }
  };
  // The check serve makes before it starts (it reads and hashes the bundle's files, nothing more; its verdict is serve's to act on).
  const { verifyBundle } = await import('./verify/verify-bundle.ts');
  step(() => verifyBundle(dirname(bundleFile)));
  // What serve imports, and the protocol endpoints (with the A2A SDK) a first /a2a or /mcp request loads.
  await Promise.all([serverModules(), import('./server/protocol-endpoints.ts')]);
  // ajv and the argument validators' compiler, as a first call brings them: one tool's validator, run on nothing.
  const [{ checkArguments }, { checkedInputSchema }] = await Promise.all([import('./tools/validation.ts'), import('./tools/local-schema.ts')]);
  const first = registry.list()[0];
  if (first) step(() => checkArguments(checkedInputSchema(first), {}));
  return 0;
}

/**
 * What `serve` imports (and `__warm` compiles): the servers, and the protocol SDKs they load, are imported only
 * when serving, so `call`, `tools` and tool workers start without them.
 */
function serverModules() {
  return Promise.all([import('./server/serve.ts'), import('./server/sdk-console.ts'), import('./server/public-url.ts')]);
}

async function serveCommand(runtime: StartedRuntime): Promise<number> {
  const { manifest, registry, workDir, values, log, http, logFormat } = runtime;
  const port = runtime.port ?? manifest.server?.port ?? 8080;
  const host = runtime.host ?? '127.0.0.1';
  const [{ serveAgent, stopOnSignals }, { routeConsoleToLog }, { publicUrlSetting }] = await serverModules();
  routeConsoleToLog(log);
  const running = await serveAgent({
    manifest,
    registry,
    workDir,
    host,
    port,
    noAuth: values['no-auth'],
    publicUrl: publicUrlSetting(values['public-url'], process.env),
    http,
    log,
    announce: runtime.announce,
  });
  stopOnSignals(running, log);
  const listening = `${manifest.agent_id} ${manifest.version} listening on ${running.url} (${registry.list().length} tools${manifest.model ? `, model ${manifest.model.provider}:${manifest.model.name}` : ', no model'})`;
  if (logFormat === 'json') log.info(listening);
  else process.stderr.write(`${listening}\n`);
  return -1;
}

async function stdioCommand({ manifest, registry, close }: StartedRuntime): Promise<number> {
  const [{ serveMcpStdio }, { clientCalls }, { sessionView }] = await Promise.all([import('./server/mcp-stdio.ts'), import('./server/client-calls.ts'), import('./tools/emergent/session-view.ts')]);
  await serveMcpStdio(manifest, sessionView(clientCalls(registry, undefined, manifest.approval?.clients), 'stdio'), close);
  return -1;
}

function toolsCommand({ registry, values }: StartedRuntime): number {
  const tools = registry.list();
  if (values.json) {
    process.stdout.write(JSON.stringify(tools.map(({ name, category, description, tags }) => ({ name, category, description, tags })), null, 2) + '\n');
  } else {
    const width = Math.max(4, ...tools.map((t) => t.name.length));
    for (const t of tools) process.stdout.write(`${t.name.padEnd(width)}  ${t.category.padEnd(7)}  ${terminalLine(firstLine(t.description))}\n`);
  }
  return 0;
}

function describeCommand({ manifest, positionals, values }: StartedRuntime): number {
  const [name] = positionals;
  if (!name) {
    return usageError({ message: 'describe needs a tool name' }, 'describe', values.json);
  }
  const spec = manifest.tools.find((t) => t.name === name);
  if (!spec) {
    const hint = unknownToolHint(name, manifest.tools.map((t) => t.name));
    writeFailureJson(values.json, [error('FORGE_TOOL_UNKNOWN', `no tool named "${name}"`, {}, hint)]);
    process.stderr.write(`error: FORGE_TOOL_UNKNOWN no tool named "${name}"\nhint: ${hint}\n`);
    return 1;
  }
  process.stdout.write(JSON.stringify(spec, null, 2) + '\n');
  return 0;
}

async function callCommand({ registry, positionals, values, timeoutMs, bundleFile, warnings = [] }: StartedRuntime): Promise<number> {
  const [name, json] = positionals;
  if (!name) {
    return usageError({ message: 'call needs a tool name' }, 'call', values.json);
  }
  let args: unknown = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json);
    } catch (err) {
      const hint = `give them as one JSON object after the tool's name, quoted: node runtime.mjs call ${name} '{"key": "value"}'`;
      return usageError({ message: `the arguments are not valid JSON: ${(err as Error).message}`, hint }, 'call', values.json);
    }
  }
  // The person named this tool, so it is approved; what it calls goes through the policy.
  // The terminal (readline) is loaded only here: a server never asks on one.
  const { personApprover } = await import('./guard/terminal-approver.ts');
  // The person at the bundle's command line: every session's forged tools are theirs to run.
  const result = await registry.execute(name, args, { timeoutMs, approver: personApprover(values.yes), approved: true, sees: 'everything' });
  // A tool that threw: the line of the bundle's tool file it threw from, as forge tool run places it (a TypeScript
  // tool is compiled into runtime.mjs, which has no such line to show).
  const at = result.ok ? undefined : (await import('./tools/tool-failure-location.ts')).toolFailureLocation(result.error.details, [join(dirname(bundleFile), 'tools')]);
  // A failed call in the shape every command fails with (its error also first of `errors`).
  // With the warnings the runtime gave as it started and ran the tool, as forge tool run --json has them.
  if (values.json) process.stdout.write(jsonDocument(result.ok ? { ...result, warnings: warnings.map(diagnosticJson) } : toolFailureJson(result, at ?? {}, {}, warnings)));
  else if (result.ok) process.stdout.write(renderValue(result.value) + '\n');
  else {
    // A tool that threw: its traceback with FORGE_VERBOSE=1 (as for the runtime's own failures), or in --json's error.details.
    const trace = tracebackKind(result.error.details);
    const verbose = Boolean(process.env.FORGE_VERBOSE);
    const hint = result.error.hint ?? (trace && !verbose ? `FORGE_VERBOSE=1 shows the ${trace} (or --json, in error.details)` : undefined);
    const where = at ? `${at.file}:${at.line}${at.column ? `:${at.column}` : ''} ` : '';
    const source = at?.lineText !== undefined ? `\n  ${at.line} │ ${terminalText(at.lineText)}` : '';
    process.stderr.write(`error: ${terminalText(where)}${result.error.code} ${terminalText(result.error.message)}${source}${hint ? `\nhint: ${terminalText(hint)}` : ''}\n`);
    if (trace && verbose) process.stderr.write(`${terminalText(result.error.details!)}\n`);
  }
  return result.ok ? 0 : 1;
}

/** Runs main() as the process: sets the exit code, keeps running for long-lived commands. */
export function run(contents: BundleContents): void {
  main(contents).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
      // Serving (-1) or done without a failure: the functions this start compiled go into the cache for the next.
      if (code <= 0) codeCacheDone(contents.codeCache);
    },
    (err: unknown) => {
      // main() reports its own failures in the log's format; this is for one in reading the command line.
      process.stderr.write(`forge runtime: ${(err as Error).message}\n`);
      if (process.env.FORGE_VERBOSE) process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * Writes the core's code cache if this start found none that fit (once per
 * bundle and Node, a few milliseconds), after the server listens: what it
 * holds is what the next start would compile. FORGE_VERBOSE says what the
 * cache did.
 */
function codeCacheDone(codeCache: CoreCodeCache | undefined): void {
  if (!codeCache) return;
  codeCache.save();
  if (process.env.FORGE_VERBOSE) process.stderr.write(`[forge] code cache: ${codeCache.cache}\n`);
}

function parsePort(value: string, name: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new Error(`${name} must be a port number (0 to 65535), not "${value}"`);
  return Number(value);
}

function parseMilliseconds(value: string, name: string): number {
  const ms = parseTimeoutOption(value);
  if (ms === undefined) throw new Error(`${name} takes ${TIMEOUT_OPTION_FORMS}, not "${value}"`);
  return ms;
}


function renderValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function firstLine(text: string): string {
  const line = text.split('\n')[0];
  return line.length > 80 ? line.slice(0, 77) + '...' : line;
}
