/**
 * Runs one process for a tool — a command tool's argv (cli_execute,
 * local_shell, test_runner), a custom tool's script, a YAML tool's step:
 * never a shell unless the caller names one; its own process group, so a
 * timeout or a cancellation kills everything it started; output capped with
 * a flag saying so. Past the cap, stdout is read and dropped (the command is
 * not blocked on a full pipe), or — for a tool whose stdout is its result —
 * the process is stopped. Each takes one of the runtime's process slots
 * (process-slots.ts) for its life: past them it waits, or is refused
 * (`busy`) when too many calls wait already.
 */
import { HeadBuffer, lastLines, TailBuffer } from './output-buffer.ts';
import { killProcessTree, spawnInGroup } from './process-tree.ts';
import { timerDelay } from '../duration.ts';
import { toolProcessSlots, type ProcessSlots } from './process-slots.ts';

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_STDERR_BYTES = 64 * 1024;
/** How long output may still arrive after the command exited, from children it left holding its pipes. */
const PIPE_GRACE_MS = 1000;

export interface CommandOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  /** A deadline of its own (besides `signal`). */
  timeoutMs?: number;
  /** Cancellation from the caller (the registry's signal: timeouts too). */
  signal?: AbortSignal;
  /** Cap for stdout (default 1 MiB). */
  maxOutputBytes?: number;
  /** Cap for stderr (default: the stdout cap). */
  maxStderrBytes?: number;
  /** Keep the first bytes of stderr (a command's report) or the last (where a failing program's error is). */
  stderr?: 'head' | 'tail';
  /** Past the stdout cap: drop the rest, or stop the process (its output is no use cut). */
  onOverflow?: 'drop' | 'stop';
  /**
   * The slots it takes one of (default: the runtime's, toolProcessSlots); false for a process run
   * inside a call that holds one already (a launch check's git), which must not wait for another.
   */
  slots?: ProcessSlots | false;
}

export interface CommandResult {
  exitCode: number | null;
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  /** Stopped for writing past the stdout cap (onOverflow: 'stop'). */
  outputLimitHit: boolean;
  durationMs: number;
  /** The command could not be started (not found, not executable). */
  spawnError?: NodeJS.ErrnoException;
  /** Not started: every process slot was taken and too many calls waited already. */
  busy?: boolean;
}

/** What a command tool returns for a command that ran: exit status, output, and what was cut. */
export function commandOutput(result: CommandResult): Record<string, unknown> {
  return {
    exit_code: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    stdout: result.stdout,
    stderr: result.stderr,
    stdout_truncated: result.stdoutTruncated,
    stderr_truncated: result.stderrTruncated,
    duration_ms: result.durationMs,
  };
}

/** The end of a stopped command's output, for the details of its error: whole lines, so a secret the cut went through does not show its end unmasked. */
export function outputTail(result: CommandResult, chars = 2000): string {
  return `stdout: ${lastLines(result.stdout, chars)}\nstderr: ${lastLines(result.stderr, chars)}`;
}

/** How a failed run ended, with the last lines of its stderr: "exited with code 3: <reason>". */
export function howItEnded(result: CommandResult, maxChars = 1500): string {
  const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
  const tail = lastLines(result.stderr, maxChars, result.stderrTruncated);
  return tail ? `${how}: ${tail}` : how;
}

export async function runCommand(options: CommandOptions): Promise<CommandResult> {
  const slots = options.slots === false ? undefined : (options.slots ?? toolProcessSlots());
  if (!slots) return runProcess(options);
  const slot = await slots.acquire(options.signal);
  if ('refused' in slot) return notStarted(slot.refused);
  try {
    return await runProcess(options);
  } finally {
    slot.release();
  }
}

/** A command that never ran: cancelled while it waited for a slot, or refused one. */
function notStarted(why: 'busy' | 'cancelled'): CommandResult {
  return { exitCode: null, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: false, cancelled: why === 'cancelled', outputLimitHit: false, durationMs: 0, ...(why === 'busy' ? { busy: true } : {}) };
}

function runProcess(options: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const stdout = new HeadBuffer(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
    const stderrLimit = options.maxStderrBytes ?? options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const stderr = options.stderr === 'tail' ? new TailBuffer(stderrLimit) : new HeadBuffer(stderrLimit);
    let timedOut = false;
    let cancelled = false;
    let outputLimitHit = false;
    let settled = false;

    const child = spawnInGroup(options.command, [...options.args], options);

    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            killProcessTree(child);
          }, timerDelay(options.timeoutMs))
        : undefined;
    const onAbort = () => {
      cancelled = true;
      killProcessTree(child);
    };
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk) && options.onOverflow === 'stop' && !outputLimitHit) {
        outputLimitHit = true;
        killProcessTree(child);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdin.on('error', () => {}); // a command that does not read its input is fine
    child.stdin.end(options.stdin ?? '');

    let pipeGrace: NodeJS.Timeout | undefined;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(pipeGrace);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        stdoutTruncated: stdout.overflowed,
        stderrTruncated: stderr instanceof TailBuffer ? stderr.dropped : stderr.overflowed,
        timedOut,
        cancelled,
        outputLimitHit,
        durationMs: Math.round(performance.now() - started),
        ...(spawnError ? { spawnError } : {}),
      });
    };
    child.on('error', (err) => finish(null, null, err as NodeJS.ErrnoException));
    // Background children still holding the pipes go with the command. One that left its process group
    // (setsid, a daemon) is out of reach without the sandbox: past a grace for the last output, the pipes
    // are closed on it, so the call (and its process slot) ends rather than wait as long as it lives.
    child.on('exit', (code, signal) => {
      killProcessTree(child);
      pipeGrace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      }, PIPE_GRACE_MS);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}
