/**
 * A long-lived process that serves one tool's calls, so a warm call costs a
 * pipe round trip instead of an interpreter start. Started on the first
 * call, restarted on the next call after it dies, killed (with its process
 * tree) when a call is aborted or times out. Calls run one at a time, and
 * each is tied to the process that runs it: a process's exit settles only
 * the call it was running, never a later call on its successor. At most
 * `maxQueued` calls wait behind the running one: a call past that is
 * answered `busy` at once (a caller flooding a slow tool would otherwise
 * hold memory and every other caller without end), and a waiting call that
 * is cancelled or times out leaves the queue then, not when its turn
 * comes. A process whose sandbox would now be mounted otherwise (a
 * credential store made since it started) is started again before its next
 * call.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { parseJsonExact } from '../exact-output.ts';
import { TailBuffer } from '../../exec/output-buffer.ts';
import { killProcessTree, spawnInGroup } from '../../exec/process-tree.ts';
import { MountsAtStart } from '../../exec/mounts-at-start.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../exec/run-command.ts';
import type { ToolResult } from '../model.ts';
import { DEFAULT_TOOL_QUEUE } from '../limits.ts';
import { ProcessSlots } from '../../exec/process-slots.ts';
import { noteWorkerStart, type WorkerRestartReason } from '../../telemetry/instrument-worker.ts';
import { PROTOCOL_FD, type WorkerFailure, type WorkerRequest, type WorkerResponse, type WorkerToolCall, type WorkerToolReply } from './worker-protocol.ts';
import type { Readable } from 'node:stream';
import type { StopNotice } from '../call-stop.ts';

/** The worker's answers: the pipe spawnInGroup opens as its fd 3. */
function protocolStream(child: ChildProcessWithoutNullStreams): Readable {
  return child.stdio[PROTOCOL_FD] as Readable;
}

export interface WorkerLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export type WorkerOutcome =
  | { kind: 'ok'; value: unknown }
  | { kind: 'error'; error: WorkerFailure }
  | { kind: 'crashed'; exitCode: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: 'output-limit'; limit: number }
  | { kind: 'spawn-failed'; error: Error }
  | { kind: 'aborted' }
  | { kind: 'busy'; waiting: number };

interface Pending {
  id: number;
  /** The process running this call: only its exit or its output settles it. */
  child: ChildProcessWithoutNullStreams;
  resolve(outcome: WorkerOutcome): void;
  onToolCall?: (tool: string, args: unknown) => Promise<ToolResult>;
}

export interface CallOptions {
  /** A path the tool may create for this call. */
  tmpDir?: string;
  depth?: number;
  /** Runs a sub-tool call the tool makes during this call (composed tools). */
  onToolCall?: (tool: string, args: unknown) => Promise<ToolResult>;
}

export class ToolWorker {
  private child?: ChildProcessWithoutNullStreams;
  private pending?: Pending;
  private partial = '';
  private partialBytes = 0;
  private nextId = 1;
  /** One call at a time: the one starting the process or running on it; the others wait their turn, first come first served. */
  private readonly turns: ProcessSlots;
  private closed = false;
  private starts = 0;
  /** Why the process before the next one stopped, for the restart count. */
  private stoppedFor: WorkerRestartReason = 'exited';
  /** An idle process whose sandbox would now be mounted otherwise is stopped; the next call starts another. */
  private readonly mounts = new MountsAtStart('all', () => {
    if (this.child && !this.pending) this.kill(this.child, 'mounts');
  });

  constructor(
    private readonly launch: () => Promise<WorkerLaunch>,
    private readonly options: { maxResponseBytes?: number; onStderr?: (text: string) => void; maxQueued?: number } = {},
  ) {
    this.turns = new ProcessSlots(1, options.maxQueued ?? DEFAULT_TOOL_QUEUE);
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The worker's process id while it runs (tests use it to kill it from outside). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async call(args: unknown, signal?: StopNotice, options: CallOptions = {}): Promise<WorkerOutcome> {
    const turn = await this.turns.acquire(signal);
    if ('refused' in turn) return turn.refused === 'busy' ? { kind: 'busy', waiting: this.turns.waitingNow } : { kind: 'aborted' };
    try {
      return await this.callNow(args, signal, options);
    } finally {
      turn.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.mounts.stopped();
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    const timer = setTimeout(() => killProcessTree(child), 1000);
    await exited;
    clearTimeout(timer);
  }

  private async callNow(args: unknown, signal: StopNotice | undefined, options: CallOptions): Promise<WorkerOutcome> {
    if (signal?.aborted) return { kind: 'aborted' };
    if (this.closed) return { kind: 'spawn-failed', error: new Error('the tool worker has been shut down') };
    // Idle (calls run one at a time): stopped at once, and its successor gets the mounts of now.
    if (this.child && this.mounts.changed()) this.kill(this.child, 'mounts');
    let child: ChildProcessWithoutNullStreams;
    try {
      child = this.child ?? (await this.start());
    } catch (err) {
      return { kind: 'spawn-failed', error: err as Error };
    }
    // Cancelled while the worker was starting: the call never reaches it (no listener would fire now).
    if (signal?.aborted) return { kind: 'aborted' };
    const id = this.nextId++;
    return new Promise<WorkerOutcome>((resolve) => {
      const onAbort = () => {
        this.kill();
        finish({ kind: 'aborted' });
      };
      const finish = (outcome: WorkerOutcome) => {
        if (this.pending?.id !== id) return;
        this.pending = undefined;
        signal?.removeEventListener('abort', onAbort);
        this.setActive(false);
        resolve(outcome);
      };
      this.pending = { id, child, resolve: finish, onToolCall: options.onToolCall };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.setActive(true);
      const request: WorkerRequest = { id, args };
      if (options.tmpDir) request.tmpDir = options.tmpDir;
      if (options.depth !== undefined) request.depth = options.depth;
      child.stdin.write(JSON.stringify(request) + '\n');
    });
  }

  private async start(): Promise<ChildProcessWithoutNullStreams> {
    noteWorkerStart(this.starts++ > 0 ? this.stoppedFor : undefined);
    this.stoppedFor = 'exited';
    const launch = await this.launch();
    this.mounts.starting();
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawnInGroup(launch.command, launch.args, { ...launch, worker: true });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      this.mounts.stopped();
      throw err;
    }
    if (this.closed) {
      // Shut down while it was starting: nothing may run on it, and nothing watches it.
      this.mounts.stopped();
      killProcessTree(child);
      throw new Error('the tool worker has been shut down');
    }
    child.on('error', () => {}); // reported through 'close'
    this.child = child;
    this.partial = '';
    this.partialBytes = 0;
    const stderr = new TailBuffer(16 * 1024);
    const answers = protocolStream(child);
    answers.setEncoding('utf8');
    answers.on('data', (text: string) => this.onAnswers(child, text));
    // What the tool prints, on either stream (its children's too), is its log; only fd 3 carries answers.
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        stderr.push(chunk);
        this.options.onStderr?.(chunk.toString('utf8'));
      });
    }
    child.stdin.on('error', () => {}); // a dead worker is reported through 'close'
    child.on('close', (exitCode, signal) => {
      if (this.child === child) {
        this.child = undefined;
        this.mounts.stopped();
      }
      if (this.pending?.child === child) this.pending.resolve({ kind: 'crashed', exitCode, signal, stderr: stderr.tail() });
    });
    this.setActive(false);
    return child;
  }

  private onAnswers(child: ChildProcessWithoutNullStreams, text: string) {
    if (child !== this.child) return; // a stopped process's last words belong to no call
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      const line = this.partial + text.slice(start, newline);
      this.partial = '';
      this.partialBytes = 0;
      start = newline + 1;
      this.onLine(child, line);
    }
    if (start < text.length) {
      this.partial += text.slice(start);
      this.partialBytes += text.length - start;
      const limit = this.options.maxResponseBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
      if (this.partialBytes > limit) {
        if (this.pending?.child === child) this.pending.resolve({ kind: 'output-limit', limit });
        this.kill(child);
      }
    }
  }

  private onLine(child: ChildProcessWithoutNullStreams, line: string) {
    if (!line.trim()) return;
    let message: WorkerResponse | WorkerToolCall;
    try {
      // Exact: a worker's result keeps integers past 2^53 (as text) instead of rounding them.
      message = parseJsonExact(line) as WorkerResponse | WorkerToolCall;
    } catch {
      return; // not protocol: only the host writes to fd 3, so this is noise
    }
    const pending = this.pending;
    if (!pending || pending.child !== child || message.id !== pending.id) return;
    if ('call' in message) {
      void this.answerToolCall(child, pending, message);
      return;
    }
    if (message.ok) pending.resolve({ kind: 'ok', value: message.value });
    else pending.resolve({ kind: 'error', error: message.error });
  }

  /** Runs a sub-tool call for the request in progress and writes the result back, if the request is still running. */
  private async answerToolCall(child: ChildProcessWithoutNullStreams, pending: Pending, message: WorkerToolCall) {
    let result: ToolResult;
    try {
      result = pending.onToolCall
        ? await pending.onToolCall(String(message.tool), message.args ?? {})
        : { ok: false, error: { code: 'FORGE_TOOL_NOT_COMPOSED', message: `this tool may not call "${message.tool}": it declares no composedOf` } };
    } catch (err) {
      result = { ok: false, error: { code: 'FORGE_TOOL_FAILED', message: (err as Error).message } };
    }
    if (this.pending !== pending || this.child !== child) return;
    const reply: WorkerToolReply = { id: message.id, reply: message.call, result };
    child.stdin.write(JSON.stringify(reply) + '\n');
  }

  private kill(child = this.child, reason: WorkerRestartReason = 'exited') {
    if (!child) return;
    if (this.child === child) {
      this.child = undefined;
      this.stoppedFor = reason;
      this.mounts.stopped();
    }
    killProcessTree(child);
  }

  /** An idle worker must not keep a CLI process alive; a busy one must. */
  private setActive(active: boolean) {
    const child = this.child;
    if (!child) return;
    if (active) child.ref();
    else child.unref();
    for (const stream of [child.stdout, child.stderr, child.stdin, protocolStream(child)] as unknown as (Socket | null)[]) {
      // A pipe the worker closed (the Python host points its fd 1 at fd 2) has no handle: ref() and unref()
      // on it would each add a 'connect' listener that never fires, two more on every call.
      if (!stream || stream.destroyed) continue;
      if (active) stream.ref();
      else stream.unref();
    }
  }
}
