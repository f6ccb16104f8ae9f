/**
 * Whether a tool sandbox can cap how many processes its command starts (a
 * fork bomb otherwise lives until its call's timeout, and fills the host's
 * process table meanwhile). The cap is RLIMIT_NPROC, set by prlimit inside
 * the sandbox. The kernel counts it per user *and user namespace* (Linux
 * 5.14's ucounts), so in a sandbox with a user namespace of its own it
 * counts that sandbox's processes alone. Anywhere else it would count every
 * process the agent's user runs on the machine (or in its container), and a
 * cap would break tools on a busy host; there no cap is set, and this says
 * why:
 *   - root: bwrap gives its sandboxes no user namespace, and the host's uid 0
 *     is exempt from RLIMIT_NPROC whatever its namespace;
 *   - a sandbox without a user namespace of its own (the probe looks: a
 *     set-user-ID bwrap makes none);
 *   - kernels before 5.14 count per user only.
 * The cap is also never above the agent's own hard limit: prlimit in the
 * sandbox cannot raise it (that takes CAP_SYS_RESOURCE on the host), and
 * would fail every tool process trying.
 */
import { readFileSync, statSync } from 'node:fs';
import { release } from 'node:os';
import type { SandboxProbe } from './sandbox-probe.ts';

/** How many processes (threads included: the kernel counts tasks) a tool's sandbox may hold when forge.yaml names none. */
export const DEFAULT_TOOL_PROCESSES = 1024;

/** The oldest kernel that counts RLIMIT_NPROC per user namespace. */
const PER_NAMESPACE_COUNT = [5, 14] as const;

export interface ProcessCapFacts {
  uid: number | undefined;
  /** os.release(): "6.1.0-18-amd64". */
  kernel: string;
  /** Whether bwrap is set-user-ID root (what tells, when the probe could not look). */
  setuidBwrap: boolean;
}

type ProbeAnswer = Pick<SandboxProbe, 'isolation' | 'bwrap' | 'prlimit' | 'ownUserNamespace'>;

/** Why tool sandboxes get no process cap here, or undefined when they do. */
export function processCapProblem(probe: ProbeAnswer, facts: ProcessCapFacts = hostFacts(probe.bwrap)): string | undefined {
  if (probe.isolation !== 'bubblewrap') return 'tool processes run without a sandbox';
  if (!probe.prlimit) return 'prlimit, from util-linux, is not available';
  if (facts.uid === 0) return 'the agent runs as root, whose sandboxes get no user namespace to count in, and the host\'s root starts processes past any cap: run the agent as a user of its own, as the generated image does';
  if (probe.ownUserNamespace === false) return 'bwrap gives a sandbox no user namespace of its own here, as a set-user-ID bwrap makes none, so a cap would count all of the user\'s processes';
  if (probe.ownUserNamespace === undefined && facts.setuidBwrap) return 'bwrap is set-user-ID, so a sandbox has no user namespace of its own to count its processes in';
  const [major, minor] = facts.kernel.split(/[.-]/).map(Number);
  if (!(major > PER_NAMESPACE_COUNT[0] || (major === PER_NAMESPACE_COUNT[0] && minor >= PER_NAMESPACE_COUNT[1]))) {
    return `Linux ${facts.kernel} counts a cap over all of the user's processes; 5.14 and later count each sandbox's own`;
  }
  return undefined;
}

/** The cap a sandbox gets for `wanted`: never above the agent's own hard limit (`lowered` says when that decided it). */
export function effectiveProcessCap(wanted: number, hardLimit: number): { cap: number; lowered: boolean } {
  return wanted > hardLimit ? { cap: hardLimit, lowered: true } : { cap: wanted, lowered: false };
}

/** The hard RLIMIT_NPROC of this process (/proc/self/limits' "Max processes"); Infinity when unlimited or unknown. */
export function ownProcessHardLimit(limits = readLimits()): number {
  const hard = /^Max processes\s+\S+\s+(\S+)/m.exec(limits)?.[1];
  return hard === undefined || hard === 'unlimited' ? Infinity : Number(hard) || Infinity;
}

function readLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

function hostFacts(bwrap: string | undefined): ProcessCapFacts {
  let setuidBwrap = false;
  try {
    setuidBwrap = bwrap !== undefined && (statSync(bwrap).mode & 0o4000) !== 0;
  } catch {
    // no such bwrap: the probe said so already
  }
  return { uid: process.getuid?.(), kernel: release(), setuidBwrap };
}
