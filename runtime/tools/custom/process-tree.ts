/**
 * Tool processes start in their own process group (detached), so a timeout
 * can kill the tool and everything it spawned with one signal to the group.
 */
import type { ChildProcess } from 'node:child_process';

export function killProcessTree(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
