/**
 * A tool worker serves many calls from one process, so the end of a call is
 * not the end of the process that could take a call's children with it.
 * Inside the bubblewrap sandbox the worker's PID namespace holds only the
 * sandbox's init (pid 1), the worker and what its calls started, so after
 * each call the worker kills every other process it can see — children
 * that made a new session or double-forked included.
 *
 * Only there: the environment flag alone is not trusted (a pass-through
 * could set it), so the worker must also be a child of pid 1 and pid 1 must
 * be bwrap. Outside a sandbox this does nothing.
 */
import { existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { SANDBOX_ENV_FLAG } from '../../exec/sandbox.ts';

export function insidePidSandbox(): boolean {
  if (process.platform !== 'linux' || process.env[SANDBOX_ENV_FLAG] !== '1' || process.ppid !== 1) return false;
  try {
    return readFileSync('/proc/1/comm', 'utf8').trim() === 'bwrap';
  } catch {
    return false;
  }
}

let sandboxed: boolean | undefined;

/**
 * The last PID handed out in this PID namespace (every process or thread
 * started here moves it) as of the last sweep; undefined until the first
 * sweep, which always runs (the tool's module may start processes as it loads).
 */
let lastPidAtSweep: string | undefined;
let lastPidFd: number | undefined;
const lastPidBuffer = Buffer.alloc(32);
/** Coming back to the same last PID takes pid_max - 300 new PIDs (the counter wraps to 300), each over a microsecond. */
let wrapMs = 0;

function lastPid(): string | undefined {
  try {
    if (lastPidFd === undefined) {
      lastPidFd = openSync('/proc/sys/kernel/ns_last_pid', 'r');
      wrapMs = (Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) - 300) / 1000;
    }
    return lastPidBuffer.toString('latin1', 0, readSync(lastPidFd, lastPidBuffer, 0, lastPidBuffer.length, 0));
  } catch {
    return undefined;
  }
}

/**
 * `callStarted`: when the call began (performance.now()). A call that started
 * no process — the namespace's last PID has not moved since the last sweep,
 * and the call was too short for it to have come all the way around — has
 * nothing to sweep.
 */
export async function sweepStrayProcesses(callStarted: number): Promise<number> {
  sandboxed ??= insidePidSandbox();
  if (!sandboxed) return 0;
  if (lastPidAtSweep !== undefined && performance.now() - callStarted < wrapMs && lastPid() === lastPidAtSweep) return 0;
  const killed = sweepAll();
  // The worker's own children among them stay zombies until Node reaps them, on a turn of its event
  // loop: until then they hold their places under the sandbox's process cap, and a next call that
  // came in meanwhile could not start a process.
  const deadline = Date.now() + 2000;
  while (killed.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
  lastPidAtSweep = lastPid();
  return killed.length;
}

function sweepAll(): number[] {
  const killed = new Set<number>();
  // Twice: a process forking while the first pass runs leaves a child the second pass finds.
  for (let pass = 0; pass < 2; pass++) {
    for (const pid of otherProcesses()) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // gone already
      }
    }
  }
  // SIGKILL is not instant: the answer waits until they are dead (gone, or a zombie), a few ms at most.
  const deadline = Date.now() + 2000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while ([...killed].some(alive) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  return [...killed];
}

function otherProcesses(): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 1 && pid !== process.pid);
}

function alive(pid: number): boolean {
  try {
    // The state follows the command name, which may hold spaces and parentheses: read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
