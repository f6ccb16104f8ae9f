/**
 * `node runtime.mjs doctor`: what this host gives the agent's guards — the
 * tool process isolation the sandbox probe found (and why not, if not),
 * memory/CPU caps, where the work dir and the generated token are, and
 * whether the secrets it needs are there and the Python packages the tools
 * declare are installed. Exit 1 when something serve would refuse to start
 * without is missing (the sandbox forge.yaml requires, the Python packages).
 */
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { AgentManifest } from './manifest.ts';
import { formatByteSize } from './exec/byte-size.ts';
import { DEFAULT_TOOL_PROCESSES, effectiveProcessCap, ownProcessHardLimit, processCapProblem } from './exec/process-cap.ts';
import { probeSandbox } from './exec/sandbox-probe.ts';
import { isExecutableFile } from './guard/command-guard.ts';
import { generatedTokenFile } from './secrets.ts';
import type { ApiSettings, McpServerSettings } from './tools/adapters/settings.ts';
import { expandEnv, templateVariables } from './tools/adapters/env-template.ts';

export interface DoctorReport {
  ok: boolean;
  /** `warning`: nothing serve refuses, but worth a look (ok stays true). */
  checks: { name: string; ok: boolean; warning?: boolean; detail: string; hint?: string }[];
}

/** `bundleDir`: the built bundle's directory (`node runtime.mjs doctor`), whose agent.json may declare Python packages. */
export async function doctor(manifest: Pick<AgentManifest, 'sandbox' | 'model' | 'python'> & Partial<Pick<AgentManifest, 'apis' | 'mcp'>>, workDir: string, env: NodeJS.ProcessEnv = process.env, bundleDir?: string): Promise<DoctorReport> {
  const probe = await probeSandbox(env);
  const mode = env.FORGE_SANDBOX ?? manifest.sandbox?.mode ?? 'auto';
  const isolated = probe.isolation === 'bubblewrap' && mode !== 'off';
  const checks: DoctorReport['checks'] = [];
  checks.push({
    name: 'isolation',
    ok: isolated || mode !== 'required',
    detail: isolated
      ? `bubblewrap at ${probe.bwrap}: tool processes get private PID/IPC/UTS namespaces, a read-only system, a private /tmp, hidden state and secrets`
      : `none: ${mode === 'off' ? 'sandbox: off' : probe.reason}${mode === 'required' ? ' (forge.yaml requires the sandbox: serve will refuse to start)' : ''}`,
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
  checks.push({ name: 'workdir', ok: existsSync(workDir), detail: existsSync(workDir) ? workDir : `${workDir} does not exist` });
  const token = env.FORGE_AUTH_TOKEN ? 'FORGE_AUTH_TOKEN (environment)' : env.FORGE_AUTH_TOKEN_FILE ? `FORGE_AUTH_TOKEN_FILE=${env.FORGE_AUTH_TOKEN_FILE}` : (existsSync(generatedTokenFile(workDir, env)) ? `in ${generatedTokenFile(workDir, env)} (generated at an earlier start)` : `generated into ${generatedTokenFile(workDir, env)} at the first start`);
  checks.push({ name: 'token', ok: !env.FORGE_AUTH_TOKEN_FILE || existsSync(env.FORGE_AUTH_TOKEN_FILE), detail: token });
  if (manifest.model) {
    const keyEnv = manifest.model.api_key_env ?? (manifest.model.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY');
    const file = env[`${keyEnv}_FILE`];
    const present = !!env[keyEnv] || (!!file && existsSync(file));
    const detail = env[keyEnv] ? `${keyEnv} (environment)` : file ? `${keyEnv}_FILE=${file}${existsSync(file) ? '' : ' (missing)'}` : `${keyEnv} is not set (nor ${keyEnv}_FILE)`;
    // A server at base_url may take no key (a local one); a hosted one answers 401 without it.
    if (present) checks.push({ name: 'model key', ok: true, detail });
    else if (manifest.model.base_url) checks.push({ name: 'model key', ok: true, warning: true, detail: `${detail}: the model calls to ${manifest.model.base_url} go without a key`, hint: `fine for a server that needs none (Ollama, vLLM); otherwise set ${keyEnv} or ${keyEnv}_FILE` });
    else checks.push({ name: 'model key', ok: false, detail, hint: `set ${keyEnv} or ${keyEnv}_FILE (a file holding the key)` });
  }
  for (const api of manifest.apis ?? []) checks.push(apiCheck(api, env));
  for (const server of manifest.mcp?.servers ?? []) checks.push(...mcpChecks(server, workDir, env));
  if (manifest.python && bundleDir !== undefined) {
    // The check serve and stdio make before they start, with its message and hint.
    const { checkPythonDependencies, requirementsFileShown } = await import('./tools/custom/python-dependencies-check.ts');
    const missing = await checkPythonDependencies(manifest.python, requirementsFileShown(bundleDir), env);
    checks.push(missing
      ? { name: 'python', ok: false, detail: `${missing.code} ${missing.message}`, ...(missing.hint ? { hint: missing.hint } : {}) }
      : { name: 'python', ok: true, detail: `the declared packages are installed (${manifest.python.dependencies.join(', ')})` });
  }
  return { ok: checks.every((c) => c.ok), checks };
}

/** The variables an API's auth reads at every call: each one missing fails every call with FORGE_API_AUTH. */
function apiCheck(api: ApiSettings, env: NodeJS.ProcessEnv): DoctorReport['checks'][number] {
  const name = `api ${api.name}`;
  const auth = api.auth;
  const vars = !auth ? [] : auth.type === 'bearer' ? [auth.token_env] : auth.type === 'api_key' ? [auth.value_env] : [auth.username_env, auth.password_env];
  if (!vars.length) return { name, ok: true, detail: 'no auth: nothing to set' };
  const missing = vars.filter((v) => !env[v]);
  if (!missing.length) return { name, ok: true, detail: `${vars.join(', ')} (environment)` };
  return {
    name,
    ok: false,
    detail: `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set: every call to API "${api.name}" fails with FORGE_API_AUTH`,
    hint: `set ${missing.join(' and ')} (auth: of API "${api.name}" in forge.yaml)`,
  };
}

/**
 * The `${VAR}` an MCP server's url, headers, env, command and args name (read when it connects), and
 * whether a stdio server's command is there. A required server that cannot connect stops the start; an
 * optional one is skipped with its tools: FAIL and warn.
 */
function mcpChecks(server: McpServerSettings, workDir: string, env: NodeJS.ProcessEnv): DoctorReport['checks'] {
  const name = `mcp ${server.name}`;
  const where = `mcp.servers[${server.name}]`;
  const fails = server.required ? { ok: false } : { ok: true, warning: true };
  const consequence = server.required ? 'the server does not connect and the agent does not start' : 'the server is skipped, and its tools with it';
  const templates: [string, string][] = [
    ...(server.url ? [[`${where}.url`, server.url] as [string, string]] : []),
    ...Object.entries(server.headers ?? {}).map(([k, v]): [string, string] => [`${where}.headers.${k}`, v]),
    ...Object.entries(server.env ?? {}).map(([k, v]): [string, string] => [`${where}.env.${k}`, v]),
    ...(server.command && !server.package ? [[`${where}.command`, server.command] as [string, string]] : []),
    ...(server.package?.args ?? server.args ?? []).map((a, i): [string, string] => [`${where}.args[${i}]`, a]),
  ];
  const missing = new Map<string, string[]>();
  for (const [path, text] of templates) for (const v of templateVariables(text)) if (env[v] === undefined) missing.set(v, [...(missing.get(v) ?? []), path]);
  const checks: DoctorReport['checks'] = [];
  for (const [variable, paths] of missing) {
    checks.push({ name, ...fails, detail: `${variable} is not set (used in ${paths.join(', ')}): ${consequence}`, hint: `set ${variable} in the environment the agent runs in` });
  }
  if (server.transport === 'stdio' && !server.package && server.command && !templateVariables(server.command).some((v) => missing.has(v))) {
    const command = expandEnv(server.command, env, `${where}.command`);
    const path = (server.env?.PATH !== undefined && !templateVariables(server.env.PATH).some((v) => missing.has(v)) ? expandEnv(server.env.PATH, env, `${where}.env.PATH`) : env.PATH) ?? '';
    const found = findCommand(command, resolve(workDir, server.cwd ?? '.'), path);
    if (!found) checks.push({ name, ...fails, detail: `command "${command}" is not found${command.includes('/') ? '' : ' on PATH'}: ${consequence}`, hint: `install ${command} on this machine, or change ${where}.command in forge.yaml` });
    else if (!missing.size) checks.push({ name, ok: true, detail: `stdio: ${found}` });
  } else if (!missing.size) checks.push({ name, ok: true, detail: server.transport === 'http' ? `http: every variable it names is set` : `stdio: the pinned package ${server.package ? `${server.package.name}@${server.package.version}` : ''}`.trim() });
  return checks;
}

/** Where a stdio server's command is (as spawn finds it: a path from the server's cwd, else on PATH), executable. */
function findCommand(command: string, cwd: string, path: string): string | undefined {
  if (command.includes('/')) {
    const file = resolve(cwd, command);
    return isExecutableFile(file) ? file : undefined;
  }
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const file = join(dir, command);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

export function formatDoctor(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const hint = (c: DoctorReport['checks'][number]) => (c.hint ? `\n${' '.repeat(width + 8)}hint: ${c.hint}` : '');
  return report.checks.map((c) => `${!c.ok ? 'FAIL' : c.warning ? 'warn' : 'ok  '}  ${c.name.padEnd(width)}  ${c.detail}${hint(c)}`).join('\n') + '\n';
}
