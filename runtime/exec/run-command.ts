/**
 * Runs one command for a tool (cli_execute, local_shell, test_runner): argv,
 * never a shell unless the caller names one; its own process group, so a
 * timeout or a cancellation kills everything it started; stdout and stderr
 * each capped (what is past the cap is read and dropped, so the command is
 * not blocked on a full pipe) with a flag saying so.
 */
import { HeadBuffer } from '../tools/custom/output-buffer.ts';
import { killProcessTree, spawnInGroup } from '../tools/custom/process-tree.ts';

export interface CommandOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  /** Cancellation from the caller (the registry's signal). */
  signal?: AbortSignal;
  /** Cap for each of stdout and stderr. */
  maxOutputBytes: number;
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
  durationMs: number;
  /** The command could not be started (not found, not executable). */
  spawnError?: NodeJS.ErrnoException;
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

/** The end of a stopped command's output, for the details of its error. */
export function outputTail(result: CommandResult, chars = 2000): string {
  return `stdout: ${result.stdout.slice(-chars)}\nstderr: ${result.stderr.slice(-chars)}`;
}

export function runCommand(options: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const stdout = new HeadBuffer(options.maxOutputBytes);
    const stderr = new HeadBuffer(options.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    let settled = false;

    const child = spawnInGroup(options.command, [...options.args], options);

    const timer = setTimeout(() => {
      timedOut = true;
      killProcessTree(child);
    }, options.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killProcessTree(child);
    };
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdin.on('error', () => {}); // a command that does not read its input is fine
    child.stdin.end(options.stdin ?? '');

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        stdoutTruncated: stdout.overflowed,
        stderrTruncated: stderr.overflowed,
        timedOut,
        cancelled,
        durationMs: Math.round(performance.now() - started),
        ...(spawnError ? { spawnError } : {}),
      });
    };
    child.on('error', (err) => finish(null, null, err as NodeJS.ErrnoException));
    // Background children still holding the pipes go with the command.
    child.on('exit', () => killProcessTree(child));
    child.on('close', (code, signal) => finish(code, signal));
  });
}
