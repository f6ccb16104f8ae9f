/**
 * Tool processes start in their own process group (detached), so a timeout
 * can kill the tool and everything it spawned with one signal to the group.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Starts a tool process as the leader of its own process group, with all three pipes. */
export function spawnInGroup(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): ChildProcessWithoutNullStreams {
  return spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
}

export function killProcessTree(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
