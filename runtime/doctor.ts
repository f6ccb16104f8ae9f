/**
 * `node runtime.mjs doctor`: what this host gives the agent's guards — the
 * tool process isolation the sandbox probe found (and why not, if not),
 * memory/CPU caps, where the work dir and the generated token are, and
 * whether the secrets it needs are there and the Python packages the tools
 * declare are installed. Exit 1 when something is missing that the agent
 * cannot start without (the sandbox forge.yaml requires, the Python packages,
 * a required MCP server's variable or command) or that fails every call of
 * its kind (an API's auth variable; the model key, where the agent is
 * deployed: see DoctorOptions.missingModelKey).
 */
import { workDirProblem } from './work-dir.ts';
import { resolve } from 'node:path';
import type { AgentManifest, ModelRef } from './manifest.ts';
import type { DiagnosticCode } from './diagnostic-codes.ts';
import { formatLocation, type Location } from './diagnostics.ts';
import { formatByteSize } from './exec/byte-size.ts';
import { DEFAULT_TOOL_PROCESSES, effectiveProcessCap, ownProcessHardLimit, processCapProblem } from './exec/process-cap.ts';
import { probeSandbox } from './exec/sandbox-probe.ts';
import { sandboxMode } from './exec/sandbox-mode.ts';
import { isSharedStateUrl, stateUrl } from './state/open-store.ts';
import type { SandboxRequiredError, SandboxSettings } from './exec/tool-sandbox.ts';
import { findOnPath, isExecutableFile } from './guard/command-guard.ts';
import { SecretFileError, secretFromEnv } from './secrets.ts';
import { tokenCheck, verifyKeyCheck } from './doctor-setting-files.ts';
import type { ApiSettings, McpServerSettings } from './tools/adapters/settings.ts';
import { expandEnv, templateVariables } from './tools/adapters/env-template.ts';

export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** `warning`: nothing serve refuses, but worth a look (ok stays true). */
  warning?: boolean;
  detail: string;
  hint?: string;
  /** The code the agent reports when it meets the problem (FORGE_SANDBOX_REQUIRED, FORGE_MODEL_KEY, FORGE_MCP_CONNECT, FORGE_API_AUTH...). */
  code?: DiagnosticCode;
  /** Where in forge.yaml, when doctor reads forge.yaml (`forge doctor`; a bundle has no forge.yaml). */
  file?: string;
  line?: number;
  column?: number;
}

export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
}

/** forge.yaml's location of a path in it (`['mcp', 'servers', 0, 'command']`). */
export type LocateInConfig = (path: readonly (string | number)[]) => Location;

export interface DoctorOptions {
  /** The built bundle's directory (`node runtime.mjs doctor`), whose agent.json may declare Python packages. */
  bundleDir?: string;
  /**
   * Where forge.yaml says what a problem is about (`forge doctor`, which reads forge.yaml; the servers and
   * APIs are then forge.yaml's, in its order).
   */
  locate?: LocateInConfig;
  /**
   * A model key that is not set (and no base_url): `fail` where the agent is deployed (the bundle's doctor),
   * as every message it is sent would fail; `warn` on a machine where a project is worked on (`forge doctor`),
   * where the tools run and forge run starts without it, forge chat refuses with FORGE_MODEL_KEY itself, and
   * the key the agent will have is the deployment's, not this machine's. A <KEY>_FILE that cannot be read
   * fails either way: the agent refuses to start on it.
   */
  missingModelKey?: 'fail' | 'warn';
}

export async function doctor(
  manifest: Pick<AgentManifest, 'sandbox' | 'model' | 'python' | 'state'> & { apis?: readonly Pick<ApiSettings, 'name' | 'auth'>[]; mcp?: { servers: readonly McpServerSettings[] } },
  workDir: string,
  env: NodeJS.ProcessEnv = process.env,
  { bundleDir, locate, missingModelKey = 'fail' }: DoctorOptions = {},
): Promise<DoctorReport> {
  const probe = await probeSandbox(env);
  const checks: DoctorReport['checks'] = [];
  let mode: SandboxSettings['mode'];
  try {
    mode = sandboxMode(manifest.sandbox?.mode, env).mode;
  } catch (err) {
    // The agent refuses to start on it, with this code, message and hint.
    const refusal = err as SandboxRequiredError;
    mode = 'required';
    checks.push({ name: 'isolation', ok: false, detail: `${refusal.message}; the agent refuses to start`, hint: refusal.hint, code: 'FORGE_SANDBOX_REQUIRED' });
  }
  const isolated = probe.isolation === 'bubblewrap' && mode !== 'off';
  if (!checks.length) checks.push({
    name: 'isolation',
    ok: isolated || mode !== 'required',
    detail: isolated
      ? `bubblewrap at ${probe.bwrap}: tool processes get private PID/IPC/UTS namespaces, a read-only system, a private /tmp, hidden state and secrets`
      : `none: ${mode === 'off' ? 'sandbox: off' : probe.reason}${mode === 'required' ? ' (forge.yaml requires the sandbox: serve will refuse to start)' : ''}`,
    // A failing check carries the code the agent refuses with, so doctor --json names the same problem the same way.
    ...(!isolated && mode === 'required' ? { code: 'FORGE_SANDBOX_REQUIRED' as const } : {}),
  });
  const memory = manifest.sandbox?.memory_bytes;
  const processes = manifest.sandbox?.processes;
  const noProcessCap = processCapProblem({ ...probe, isolation: isolated ? 'bubblewrap' : 'none' });
  const wanted = processes ?? DEFAULT_TOOL_PROCESSES;
  const { cap, lowered } = effectiveProcessCap(wanted, ownProcessHardLimit());
  const processCap = noProcessCap
    ? `no process cap (${noProcessCap})`
    : lowered
      ? `at most ${cap} processes per tool sandbox (the agent's own hard limit, below the ${wanted} asked for)`
      : `at most ${cap}${processes ? '' : ' (default)'} processes per tool sandbox`;
  checks.push({ name: 'limits', ok: true, detail: probe.prlimit ? `prlimit at ${probe.prlimit}: memory cap ${memory ? formatByteSize(memory) : '1 GiB (default)'} per tool process; ${processCap}` : 'prlimit not found: no memory, CPU or process caps' });
  const workDirMissing = workDirProblem(workDir);
  checks.push({ name: 'workdir', ok: !workDirMissing, detail: workDirMissing ?? workDir, ...(workDirMissing ? { code: 'FORGE_WORKDIR_MISSING' as const } : {}) });
  checks.push(tokenCheck(workDir, env, isSharedStateUrl(stateUrl({ env, configured: manifest.state }))));
  // Only a bundle is verified at start (forge run serves sources).
  const verifyKey = bundleDir !== undefined ? verifyKeyCheck(env) : undefined;
  if (verifyKey) checks.push(verifyKey);
  if (manifest.model) checks.push(...modelKeyChecks(manifest.model, env, missingModelKey));
  (manifest.apis ?? []).forEach((api, i) => checks.push(apiCheck(api, i, env, locate)));
  (manifest.mcp?.servers ?? []).forEach((server, i) => checks.push(...mcpChecks(server, i, workDir, env, locate)));
  if (manifest.python && bundleDir !== undefined) {
    // The check serve and stdio make before they start, with its code (no interpreter: FORGE_PYTHON_MISSING; packages: FORGE_PYTHON_DEPS), message and hint.
    const { checkPythonDependencies, requirementsFileShown } = await import('./tools/custom/python-dependencies-check.ts');
    const missing = await checkPythonDependencies(manifest.python, requirementsFileShown(bundleDir), env);
    checks.push(missing
      ? { name: 'python', ok: false, detail: missing.message, code: missing.code, ...(missing.hint ? { hint: missing.hint } : {}) }
      : { name: 'python', ok: true, detail: `the declared packages are installed (${manifest.python.dependencies.join(', ')})` });
  }
  return { ok: checks.every((c) => c.ok), checks };
}

/**
 * The key of each model the agent may ask: its main model, then model.fallbacks in order (serve warns of
 * each one missing). A key not set fails the bundle's doctor only when no model is left to answer: the agent
 * falls back past a model whose calls fail, so one missing key beside a usable model is a warning.
 */
function modelKeyChecks(model: NonNullable<AgentManifest['model']>, env: NodeJS.ProcessEnv, missingModelKey: 'fail' | 'warn'): DoctorCheck[] {
  const chain: ModelRef[] = [model, ...(model.fallbacks ?? [])];
  const keyOf = (ref: ModelRef) => ref.api_key_env ?? (ref.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY');
  const keyed = (ref: ModelRef) => !!env[keyOf(ref)] || !!env[`${keyOf(ref)}_FILE`];
  // A model that can answer: its key is there (a file named is read at start), or its server may take none.
  const usable = chain.filter((ref) => keyed(ref) || ref.base_url).length;
  return chain.map((ref, i): DoctorCheck => {
    const keyEnv = keyOf(ref);
    const file = env[`${keyEnv}_FILE`];
    // Named when there are several: which model's key it is.
    const which = chain.length > 1 ? `${i === 0 ? 'model' : `fallback ${i}`} ${ref.provider}:${ref.name}: ` : '';
    const detail = which + (env[keyEnv] ? `${keyEnv} (environment)` : file ? `${keyEnv}_FILE=${file}` : `${keyEnv} is not set (nor ${keyEnv}_FILE)`);
    const set = `set ${keyEnv} or ${keyEnv}_FILE (a file holding the key)`;
    if (env[keyEnv]) return { name: 'model key', ok: true, detail };
    if (file) {
      // Read as the agent reads it at start: a directory or an empty file stops it as a missing one does.
      const unusable = keyFileProblem(env, keyEnv);
      return unusable ? { name: 'model key', ok: false, detail: `${which}${unusable.message}; the agent refuses to start`, hint: unusable.hint, code: unusable.code } : { name: 'model key', ok: true, detail };
    }
    // A server at base_url may take no key (a local one); a hosted one answers 401 without it.
    if (ref.base_url) return { name: 'model key', ok: true, warning: true, detail: `${detail}: the model calls to ${ref.base_url} go without a key`, hint: `fine for a server that needs none (Ollama, vLLM); otherwise set ${keyEnv} or ${keyEnv}_FILE` };
    if (usable) return { name: 'model key', ok: true, warning: true, detail: `${detail}: calls to it fail, and the agent goes on to another model of the chain`, hint: set, code: 'FORGE_MODEL_KEY' };
    if (missingModelKey === 'warn') return { name: 'model key', ok: true, warning: true, detail: `${detail}: forge chat refuses to start, and the agent answers every message with an error; its tools run without it`, hint: `${set} to talk to the model here; where the agent is deployed, its doctor (node runtime.mjs doctor) fails without it`, code: 'FORGE_MODEL_KEY' };
    return { name: 'model key', ok: false, detail: `${detail}: the agent answers every message with an error`, hint: set, code: 'FORGE_MODEL_KEY' };
  });
}

/** Why the agent would refuse NAME_FILE at start (not there, unreadable, empty), or undefined when it holds a key. */
function keyFileProblem(env: NodeJS.ProcessEnv, name: string): SecretFileError | undefined {
  try {
    secretFromEnv(env, name, 'FORGE_MODEL_KEY');
    return undefined;
  } catch (err) {
    if (err instanceof SecretFileError) return err;
    throw err;
  }
}

/** `file`, `line` and `column` of a forge.yaml path, when doctor has forge.yaml (the source line is for eyes: left out). */
function at(locate: LocateInConfig | undefined, path: readonly (string | number)[]): Pick<DoctorCheck, 'file' | 'line' | 'column'> {
  if (!locate) return {};
  const { file, line, column } = locate(path);
  return { ...(file ? { file } : {}), ...(line ? { line } : {}), ...(column ? { column } : {}) };
}

/** The variables an API's auth reads at every call: each one missing fails every call with FORGE_API_AUTH. */
function apiCheck(api: Pick<ApiSettings, 'name' | 'auth'>, index: number, env: NodeJS.ProcessEnv, locate: LocateInConfig | undefined): DoctorCheck {
  const name = `api ${api.name}`;
  const auth = api.auth;
  const vars: [string, string][] = !auth ? [] : auth.type === 'bearer' ? [['token_env', auth.token_env]] : auth.type === 'api_key' ? [['value_env', auth.value_env]] : [['username_env', auth.username_env], ['password_env', auth.password_env]];
  if (!vars.length) return { name, ok: true, detail: 'no auth: nothing to set' };
  const missing = vars.filter(([, v]) => !env[v]);
  if (!missing.length) return { name, ok: true, detail: `${vars.map(([, v]) => v).join(', ')} (environment)` };
  const names = missing.map(([, v]) => v);
  return {
    name,
    ok: false,
    detail: `${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not set: every call to API "${api.name}" fails with FORGE_API_AUTH`,
    hint: `set ${names.join(' and ')} (auth: of API "${api.name}" in forge.yaml)`,
    code: 'FORGE_API_AUTH',
    ...at(locate, ['apis', index, 'auth', missing[0][0]]),
  };
}

/**
 * The `${VAR}` an MCP server's url, headers, env, command and args name (read when it connects), and
 * whether a stdio server's command is there. A required server that cannot connect stops the start; an
 * optional one is skipped with its tools: FAIL and warn.
 */
function mcpChecks(server: McpServerSettings, index: number, workDir: string, env: NodeJS.ProcessEnv, locate: LocateInConfig | undefined): DoctorCheck[] {
  const name = `mcp ${server.name}`;
  const where = `mcp.servers[${server.name}]`;
  const inConfig = (...path: (string | number)[]) => at(locate, ['mcp', 'servers', index, ...path]);
  // The codes the agent reports when the server does not connect (adapter-runtime.ts).
  const fails = server.required ? { ok: false, code: 'FORGE_MCP_CONNECT' as const } : { ok: true, warning: true, code: 'FORGE_MCP_SKIPPED' as const };
  const consequence = server.required ? 'the server does not connect and the agent does not start' : 'the server is skipped, and its tools with it';
  // [as messages name it, its path under the server in forge.yaml, the text]. Only forge doctor locates: a bundle's pinned package has no forge.yaml args.
  const templates: [string, (string | number)[], string][] = [
    ...(server.url ? [[`${where}.url`, ['url'], server.url] as [string, (string | number)[], string]] : []),
    ...Object.entries(server.headers ?? {}).map(([k, v]): [string, (string | number)[], string] => [`${where}.headers.${k}`, ['headers', k], v]),
    ...Object.entries(server.env ?? {}).map(([k, v]): [string, (string | number)[], string] => [`${where}.env.${k}`, ['env', k], v]),
    ...(server.command && !server.package ? [[`${where}.command`, ['command'], server.command] as [string, (string | number)[], string]] : []),
    ...(server.package?.args ?? server.args ?? []).map((a, i): [string, (string | number)[], string] => [`${where}.args[${i}]`, ['args', i], a]),
  ];
  const missing = new Map<string, { shown: string[]; first: (string | number)[] }>();
  for (const [shown, path, text] of templates) {
    for (const v of templateVariables(text)) {
      if (env[v] !== undefined) continue;
      const seen = missing.get(v);
      if (seen) seen.shown.push(shown);
      else missing.set(v, { shown: [shown], first: path });
    }
  }
  const checks: DoctorCheck[] = [];
  for (const [variable, { shown, first }] of missing) {
    checks.push({ name, ...fails, detail: `${variable} is not set (used in ${shown.join(', ')}): ${consequence}`, hint: `set ${variable} in the environment the agent runs in`, ...inConfig(...first) });
  }
  if (server.transport === 'stdio' && !server.package && server.command && !templateVariables(server.command).some((v) => missing.has(v))) {
    const command = expandEnv(server.command, env, `${where}.command`);
    const path = (server.env?.PATH !== undefined && !templateVariables(server.env.PATH).some((v) => missing.has(v)) ? expandEnv(server.env.PATH, env, `${where}.env.PATH`) : env.PATH) ?? '';
    const found = findCommand(command, resolve(workDir, server.cwd ?? '.'), path);
    // What a ${VAR} holds is never shown (doctor's output may well go to a shared log): a command naming one is shown as written.
    const named = templateVariables(server.command).length > 0;
    const shown = named ? server.command : command;
    if (!found) checks.push({ name, ...fails, detail: `command "${shown}" is not found${command.includes('/') ? '' : ' on PATH'}: ${consequence}`, hint: `install ${shown} on this machine, or change ${where}.command in forge.yaml`, ...inConfig('command') });
    else if (!missing.size) checks.push({ name, ok: true, detail: `stdio: ${named ? `${server.command} (found)` : found}` });
  } else if (!missing.size) checks.push({ name, ok: true, detail: server.transport === 'http' ? `http: every variable it names is set` : `stdio: the pinned package ${server.package ? `${server.package.name}@${server.package.version}` : ''}`.trim() });
  return checks;
}

/** Where a stdio server's command is (as spawn finds it: a path from the server's cwd, else on PATH), executable. */
function findCommand(command: string, cwd: string, path: string): string | undefined {
  if (command.includes('/')) {
    const file = resolve(cwd, command);
    return isExecutableFile(file) ? file : undefined;
  }
  return findOnPath(command, path);
}

/** A check's line; under a problem, its `file:line:column CODE` (as diagnostics start) and its hint. */
export function formatDoctor(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const indent = '\n' + ' '.repeat(width + 8);
  const where = (c: DoctorCheck) => {
    const text = [formatLocation(c), c.code ?? ''].filter(Boolean).join(' ');
    return text ? `${indent}${text}` : '';
  };
  const hint = (c: DoctorCheck) => (c.hint ? `${indent}hint: ${c.hint}` : '');
  return report.checks.map((c) => `${!c.ok ? 'FAIL' : c.warning ? 'warn' : 'ok  '}  ${c.name.padEnd(width)}  ${c.detail}${where(c)}${hint(c)}`).join('\n') + '\n';
}
