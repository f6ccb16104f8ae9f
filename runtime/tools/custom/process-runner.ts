/**
 * Runs one tool process to completion: JSON on stdin, result on stdout,
 * minimal environment, cwd = work dir, capped output, and a timeout (or an
 * abort) that kills the whole process tree.
 */
import { HeadBuffer, TailBuffer } from './output-buffer.ts';
import { killProcessTree, spawnInGroup } from './process-tree.ts';

export const DEFAULT_MAX_STDOUT = 1024 * 1024;
export const DEFAULT_MAX_STDERR = 64 * 1024;

export interface RunOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  signal?: AbortSignal;
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
}

export interface RunResult {
  exitCode: number | null;
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: TailBuffer;
  /** Why Forge stopped the process, if it did. */
  stoppedBy?: 'abort' | 'output-limit';
  /** The process could not be started at all. */
  spawnError?: Error;
}

export function runProcess(options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    const stdout = new HeadBuffer(options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT);
    const stderr = new TailBuffer(options.maxStderrBytes ?? DEFAULT_MAX_STDERR);
    let stoppedBy: RunResult['stoppedBy'];
    let settled = false;

    const child = spawnInGroup(options.command, options.args, options);

    const stop = (reason: NonNullable<RunResult['stoppedBy']>) => {
      stoppedBy ??= reason;
      killProcessTree(child);
    };
    const onAbort = () => stop('abort');
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk)) stop('output-limit');
    });
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A tool that exits without reading its input is fine; ignore EPIPE on stdin.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');

    const finish = (result: Omit<RunResult, 'stdout' | 'stderr' | 'stoppedBy'>) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...result, stdout: stdout.toString(), stderr, stoppedBy });
    };
    child.on('error', (err) => finish({ exitCode: null, signal: null, spawnError: err }));
    child.on('exit', () => {
      // Background children of the tool still hold the pipes open; the tool's
      // call is over, so they go too (and 'close' can then fire).
      killProcessTree(child);
    });
    child.on('close', (exitCode, signal) => finish({ exitCode, signal }));
  });
}
