/**
 * Whether a tool sandbox can cap how many processes its command starts (a
 * fork bomb otherwise lives until its call's timeout, and fills the host's
 * process table meanwhile). The cap is RLIMIT_NPROC, set by prlimit inside
 * the sandbox. The kernel counts it per user *and user namespace* (Linux
 * 5.14's ucounts), so in a sandbox with a user namespace of its own it
 * counts that sandbox's processes alone. Anywhere else it would count every
 * process the agent's user runs on the machine, and a cap would break tools
 * on a busy desktop; there no cap is set, and this says why:
 *   - root is exempt from RLIMIT_NPROC whatever its namespace (the kernel
 *     lets uid 0 of the host fork past it);
 *   - a set-user-ID bwrap makes no user namespace unless told to;
 *   - kernels before 5.14 count per user only.
 */
import { statSync } from 'node:fs';
import { release } from 'node:os';
import type { SandboxProbe } from './sandbox-probe.ts';

/** How many processes (threads included: the kernel counts tasks) a tool's sandbox may hold when forge.yaml names no cap. */
export const DEFAULT_TOOL_PROCESSES = 1024;

/** The oldest kernel that counts RLIMIT_NPROC per user namespace. */
const PER_NAMESPACE_COUNT = [5, 14] as const;

export interface ProcessCapFacts {
  uid: number | undefined;
  /** os.release(): "6.1.0-18-amd64". */
  kernel: string;
  /** Whether bwrap is set-user-ID root. */
  setuidBwrap: boolean;
}

/** Why tool sandboxes get no process cap here, or undefined when they do. */
export function processCapProblem(probe: Pick<SandboxProbe, 'isolation' | 'bwrap' | 'prlimit'>, facts: ProcessCapFacts = hostFacts(probe.bwrap)): string | undefined {
  if (probe.isolation !== 'bubblewrap') return 'tool processes run without a sandbox';
  if (!probe.prlimit) return 'prlimit (util-linux) is not available';
  if (facts.uid === 0) return 'the agent runs as root, which the kernel lets start processes past any cap (run it as a user of its own, as the generated image does)';
  if (facts.setuidBwrap) return 'bwrap is set-user-ID, so a sandbox has no user namespace of its own to count its processes in';
  const [major, minor] = facts.kernel.split(/[.-]/).map(Number);
  if (!(major > PER_NAMESPACE_COUNT[0] || (major === PER_NAMESPACE_COUNT[0] && minor >= PER_NAMESPACE_COUNT[1]))) {
    return `Linux ${facts.kernel} counts a cap over all of the user's processes (5.14 and later count each sandbox's own)`;
  }
  return undefined;
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
