/**
 * Start-up of the tool sandbox for a running agent (bundle or `forge run`):
 * probe what the platform allows, install it for every tool process, and
 * say once, clearly, when tools will run without isolation. forge.yaml's
 * `sandbox: required` turns that into a refusal to start
 * (SandboxRequiredError). FORGE_SANDBOX=off|auto|required overrides the mode
 * for one start (sandbox-mode.ts).
 */
import type { Logger } from '../tools/model.ts';
import { formatByteSize } from './byte-size.ts';
import { findPrlimit, probeSandbox, type SandboxProbe } from './sandbox-probe.ts';
import { sandboxMode } from './sandbox-mode.ts';
import { installToolSandbox, type SandboxSettings, type SandboxStatus } from './tool-sandbox.ts';

/**
 * `codeDirs`: where the tools' own files are (the bundle's dir, or the project root), readable inside.
 * `probing`: a probe started earlier (the bundle starts it first thing, so that bwrap's run
 * overlaps verifying and loading the bundle instead of following them).
 */
export async function startToolSandbox(settings: SandboxSettings | undefined, workDir: string, log: Logger, env: NodeJS.ProcessEnv = process.env, codeDirs: readonly string[] = [], probing?: Promise<SandboxProbe>): Promise<SandboxStatus> {
  const { mode, from: modeFrom } = sandboxMode(settings?.mode, env);
  // Off: no isolation, but the caps still apply, as they do without bubblewrap.
  const prlimit = mode === 'off' ? findPrlimit(env) : undefined;
  const probe = mode === 'off' ? { isolation: 'none' as const, reason: 'the sandbox is off', ...(prlimit ? { prlimit } : {}) } : await (probing ?? probeSandbox(env));
  const status = installToolSandbox(probe, { ...settings, mode }, workDir, codeDirs, modeFrom);
  // Off by the environment (an operator, or an image packaged with --no-sandbox): said as plainly as a platform's refusal.
  if (mode === 'off' && modeFrom === 'FORGE_SANDBOX') {
    log.warn("tool processes run WITHOUT a sandbox: FORGE_SANDBOX=off. They can see the agent's processes, its environment (the token, API keys) and files outside the work dir; unset it (or set FORGE_SANDBOX=required) to isolate them");
  }
  if (status.isolation === 'none' && mode === 'auto') {
    log.warn(`tool processes run WITHOUT a sandbox: ${status.reason}. They can see the agent's processes and files outside the work dir; install bubblewrap (or allow namespaces) to isolate them, or set sandbox: required to refuse to start like this`);
  }
  if (!status.memory_caps) log.warn('tool processes run without memory, CPU or process caps: prlimit (util-linux) is not available');
  return status;
}

export function describeSandbox(status: SandboxStatus): string {
  const isolation = status.isolation === 'bubblewrap' ? 'bubblewrap (private PID/IPC/UTS namespaces, read-only system, private /tmp and /run, state and home credentials hidden)' : `none (${status.reason ?? 'no sandbox'})`;
  const caps = status.memory_caps ? `memory cap ${formatByteSize(status.default_memory_bytes!)} per tool process by default` : 'no memory, CPU or process caps';
  const processes = status.default_processes
    ? `at most ${status.default_processes} processes per tool sandbox by default${status.process_hard_limit ? ' (the agent\'s own hard limit, below the cap asked for)' : ''}`
    : status.isolation === 'bubblewrap' && status.memory_caps ? `no process cap: ${status.process_cap_problem}` : undefined;
  return `tool isolation: ${isolation}; ${caps}${processes ? `; ${processes}` : ''}; mode ${status.mode}`;
}
