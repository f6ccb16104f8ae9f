/**
 * `node runtime.mjs doctor`: what this host gives the agent's guards — the
 * tool process isolation the sandbox probe found (and why not, if not),
 * memory/CPU caps, where the work dir and the generated token are, and
 * whether the secrets it needs are there and the Python packages the tools
 * declare are installed. Exit 1 when something serve would refuse to start
 * without is missing (the sandbox forge.yaml requires, the Python packages).
 */
import { existsSync } from 'node:fs';
import type { AgentManifest } from './manifest.ts';
import { formatByteSize } from './exec/byte-size.ts';
import { DEFAULT_TOOL_PROCESSES, effectiveProcessCap, ownProcessHardLimit, processCapProblem } from './exec/process-cap.ts';
import { probeSandbox } from './exec/sandbox-probe.ts';
import { generatedTokenFile } from './secrets.ts';

export interface DoctorReport {
  ok: boolean;
  /** `warning`: nothing serve refuses, but worth a look (ok stays true). */
  checks: { name: string; ok: boolean; warning?: boolean; detail: string; hint?: string }[];
}

/** `bundleDir`: the built bundle's directory (`node runtime.mjs doctor`), whose agent.json may declare Python packages. */
export async function doctor(manifest: Pick<AgentManifest, 'sandbox' | 'model' | 'python'>, workDir: string, env: NodeJS.ProcessEnv = process.env, bundleDir?: string): Promise<DoctorReport> {
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

export function formatDoctor(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const hint = (c: DoctorReport['checks'][number]) => (c.hint ? `\n${' '.repeat(width + 8)}hint: ${c.hint}` : '');
  return report.checks.map((c) => `${!c.ok ? 'FAIL' : c.warning ? 'warn' : 'ok  '}  ${c.name.padEnd(width)}  ${c.detail}${hint(c)}`).join('\n') + '\n';
}
