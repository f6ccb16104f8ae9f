/**
 * Tool processes start in their own process group (detached), so a timeout
 * can kill the tool and everything it spawned with one signal to the group,
 * and inside the agent's tool sandbox when one is installed
 * (runtime/exec/tool-sandbox.ts): there, killing the group kills bwrap,
 * whose PID namespace takes every process of the call with it, even those
 * that left the group with a new session.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { toolProcessCommand } from './tool-sandbox.ts';

/** Starts a tool process as the leader of its own process group, with all three pipes (a worker: a fourth, its answers). */
export function spawnInGroup(command: string, args: string[], options: { cwd: string; env: Record<string, string>; worker?: boolean }): ChildProcessWithoutNullStreams {
  const sandboxed = toolProcessCommand(command, args, options);
  const child = spawn(sandboxed.command, sandboxed.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: options.worker ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  killedOnExit(child);
  return child;
}

/** The tool process groups whose leader still runs. */
const running = new Set<ChildProcess>();

/**
 * A process group of its own is out of the terminal's reach, and nothing ends it when this process does: a
 * process.exit() before the group was stopped (a second Ctrl-C or SIGTERM, which a server answers by exiting
 * at once) left a busy worker and what it started running. Every group still running is killed as this
 * process exits (the 'exit' event, whose handlers must be synchronous, as process.kill is).
 */
function killedOnExit(child: ChildProcess): void {
  if (child.pid === undefined || process.platform === 'win32') return;
  if (running.size === 0) process.once('exit', killRunning);
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killRunning);
  });
}

function killRunning(): void {
  for (const child of running) killProcessTree(child);
  running.clear();
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
