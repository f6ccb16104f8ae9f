/**
 * One warm Node process per sandboxed forged tool (see sandbox-worker.ts):
 * Node's permission model (reads: the tool's code file only; no writes,
 * child processes or workers), a heap cap (--max-old-space-size), a time
 * cap per call (the process is killed past it and restarted on the next
 * call), an empty environment, resource limits through prlimit where it
 * exists (memory outside the JS heap too: RLIMIT_DATA), and its output capped. The code reaches tools and the network
 * only through `bridge`, which the host answers under its own policies.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { hiddenFromToolProcesses, installedSandboxProbe } from '../../exec/tool-sandbox.ts';
import { sandboxCommand as hostSandboxCommand } from '../../exec/sandbox.ts';
import { permissionFlag } from '../../node-lines.ts';
import { TailBuffer } from '../../exec/output-buffer.ts';
import { killProcessTree } from '../../exec/process-tree.ts';
import { MountsAtStart } from '../../exec/mounts-at-start.ts';
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MAX_RESULT_CHARS, SANDBOX_WORKER_SOURCE } from './sandbox-worker.ts';

export interface SandboxLimits {
  /** V8 old-space cap in MB. */
  memoryMb: number;
  /** Wall time per call in ms. */
  timeoutMs: number;
}

export interface SandboxAllow {
  tools: string[];
  hosts: string[];
}

/** A call the code makes through the bridge: the host decides and answers with JSON text. */
export type BridgeHandler = (kind: 'tool' | 'fetch', request: unknown) => Promise<{ ok: true; value: unknown } | { ok: false; error: string }>;

export type SandboxOutcome = { ok: true; value: unknown; durationMs: number } | { ok: false; code: SandboxFailure; message: string; durationMs: number };

export type SandboxFailure = 'FORGE_SANDBOX_ERROR' | 'FORGE_SANDBOX_TIMEOUT' | 'FORGE_SANDBOX_MEMORY' | 'FORGE_SANDBOX_OUTPUT' | 'FORGE_SANDBOX_CRASHED' | 'FORGE_SANDBOX_CANCELLED';

/** Tool calls and fetches one call of the code may make through the bridge. */
export const MAX_BRIDGE_CALLS = 100;

/** Bytes of one protocol line past which the process is stopped (a result over the limit, with room for escaping). */
const MAX_LINE_BYTES = MAX_RESULT_CHARS * 2 + 64 * 1024;

/** How node says it could not get memory: V8's heap limit, or an allocation the data cap refused ("Array buffer allocation failed", "Fatal process out of memory"). */
const OUT_OF_MEMORY = /heap out of memory|allocation failed|out of memory|OOM/i;

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { memoryMb: 64, timeoutMs: 5000 };

/**
 * The host's process sandbox (bubblewrap, runtime/exec) around the Node
 * process, when the running agent installed one: no network at all
 * (--unshare-net), nothing writable, private PID/IPC/UTS namespaces, dies
 * with the agent, and hidden what every tool process has hidden (the state
 * dir, token and key files, the home's credentials), with the code's own
 * directory bound back read-only. Node's permission model narrows reads to
 * code.js, but Node does not hold it against malicious code: this layer
 * must keep the secrets by itself.
 */
export function processSandboxSeam(command: string, args: string[], codeDir: string): { command: string; args: string[] } {
  const probe = installedSandboxProbe();
  if (!probe) return { command, args };
  return hostSandboxCommand(command, args, { isolation: 'bubblewrap', bwrap: probe.bwrap, writable: [], hidden: hiddenFromToolProcesses(), reveal: [codeDir], cwd: codeDir, network: false });
}

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

const MB = 2 ** 20;
/** On top of node's own start: the young generation (up to 3 × 16 MB semi-spaces), code, the worker and its buffers. */
const NODE_HEADROOM_BYTES = 96 * MB;
/** Used when node's start cannot be measured: above what Node 20 (about 50 MB) and Node 24 (a few hundred MB) reserve. */
const NODE_START_FALLBACK_BYTES = 512 * MB;

let nodeStartBytes: Promise<number> | undefined;

/**
 * The writable data (VmData) this node binary holds right after it starts,
 * measured once per host process: V8 reserves it before any code runs, and
 * how much depends on the Node line, so a fixed number would either starve
 * a newer node (it then fails to start, or hangs) or leave room on an older one.
 * Measured in the background: a node start blocking the server's event loop
 * would hold every other request for its 50 ms.
 */
function measuredNodeStartBytes(): Promise<number> {
  nodeStartBytes ??= new Promise((resolve) => {
    const script = 'process.stdout.write(/^VmData:\\s+(\\d+) kB$/m.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1])';
    execFile(process.execPath, ['-e', script], { env: {}, encoding: 'utf8', timeout: 10_000 }, (err, stdout) => {
      const kb = Number(stdout);
      resolve(!err && kb > 0 ? kb * 1024 : NODE_START_FALLBACK_BYTES);
    });
  });
  return nodeStartBytes;
}

/**
 * The RLIMIT_DATA cap of a sandbox whose heap cap is `memoryMb`: ArrayBuffers
 * and other memory outside the JS heap are not under --max-old-space-size, so
 * without it a tool grows the host's memory until the time cap. RLIMIT_AS would
 * count the address space V8 only reserves (its pointer cage is gigabytes) and
 * stop node from starting; RLIMIT_DATA counts what can be written.
 */
export async function sandboxDataBytes(memoryMb: number): Promise<number> {
  return memoryMb * MB + (await measuredNodeStartBytes()) + NODE_HEADROOM_BYTES;
}

/** The command line that starts a sandbox for `codeFile`. */
export async function sandboxCommand(codeFile: string, allow: SandboxAllow, limits: SandboxLimits): Promise<{ command: string; args: string[] }> {
  const node = [
    permissionFlag(),
    `--allow-fs-read=${codeFile}`,
    `--max-old-space-size=${limits.memoryMb}`,
    `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(limits.memoryMb / 8)))}`,
    '--no-warnings',
    '--disallow-code-generation-from-strings',
    '-e',
    SANDBOX_WORKER_SOURCE,
    codeFile,
    JSON.stringify(allow),
  ];
  // No files written (not even a core dump), few descriptors (its three pipes and little else), a
  // lifetime CPU budget, so a spinning process that outlives its host still ends, and its data capped.
  const cpuSeconds = Math.max(120, Math.ceil((limits.timeoutMs / 1000) * 20));
  const caps = ['--fsize=0', '--core=0', '--nofile=64', `--cpu=${cpuSeconds}`, `--data=${await sandboxDataBytes(limits.memoryMb)}`];
  const wrapped = PRLIMIT ? { command: PRLIMIT, args: [...caps, '--', process.execPath, ...node] } : { command: process.execPath, args: node };
  return processSandboxSeam(wrapped.command, wrapped.args, dirname(codeFile));
}

interface Running {
  id: number;
  started: number;
  bridgeCalls: number;
  bridge: BridgeHandler;
  settle(outcome: SandboxOutcome): void;
}

export class SandboxProcess {
  private child?: ChildProcessWithoutNullStreams;
  private current?: Running;
  private partial = '';
  private stderr = new TailBuffer(8 * 1024);
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Processes started so far (the first, then one after each kill or crash, or a change of the sandbox's mounts). */
  starts = 0;
  /** An idle process whose sandbox would now hide otherwise is stopped; the next call starts another. */
  private readonly mounts = new MountsAtStart('hidden', () => {
    if (this.child && !this.current) this.kill();
  });

  constructor(
    private readonly codeFile: string,
    private readonly allow: SandboxAllow,
    readonly limits: SandboxLimits,
  ) {
    // The first call needs it: measured meanwhile.
    void measuredNodeStartBytes();
  }

  /** Runs execute(input); calls run one at a time, each under the time cap. */
  call(input: unknown, bridge: BridgeHandler, signal?: AbortSignal): Promise<SandboxOutcome> {
    const run = this.queue.then(() => this.run(input, bridge, signal));
    this.queue = run.catch(() => {});
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.kill();
  }

  private async run(input: unknown, bridge: BridgeHandler, signal?: AbortSignal): Promise<SandboxOutcome> {
    const started = performance.now();
    // Idle (calls take turns): stopped at once, and its successor gets the mounts of now.
    if (this.child && this.mounts.changed()) this.kill();
    if (!this.child) this.mounts.starting();
    const command = this.child ? undefined : await sandboxCommand(this.codeFile, this.allow, this.limits);
    if (this.closed || signal?.aborted) {
      if (!this.child) this.mounts.stopped(); // no process was started
      return this.closed ? { ok: false, code: 'FORGE_SANDBOX_CRASHED', message: 'the sandbox is closed', durationMs: 0 } : { ok: false, code: 'FORGE_SANDBOX_CANCELLED', message: 'the call was cancelled', durationMs: 0 };
    }
    // Calls take turns, so no process was started or lost while the command was being made.
    const child = this.child ?? this.startProcess(command!);
    return new Promise<SandboxOutcome>((resolve) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.fail('FORGE_SANDBOX_TIMEOUT', `the code ran past its time cap of ${this.limits.timeoutMs} ms and was stopped`);
      }, this.limits.timeoutMs);
      const onAbort = () => this.fail('FORGE_SANDBOX_CANCELLED', 'the call was cancelled');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.current = {
        id,
        started,
        bridgeCalls: 0,
        bridge,
        settle: (outcome) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.current = undefined;
          resolve(outcome);
        },
      };
      child.stdin.write(JSON.stringify({ id, input: JSON.stringify(input ?? {}) }) + '\n');
    });
  }

  /** Ends the running call with a failure and stops the process (it restarts on the next call). */
  private fail(code: SandboxFailure, message: string): void {
    const current = this.current;
    this.kill();
    current?.settle({ ok: false, code, message, durationMs: performance.now() - current.started });
  }

  private kill(): void {
    const child = this.child;
    this.child = undefined;
    this.mounts.stopped();
    this.partial = '';
    if (child) killProcessTree(child);
  }

  /** Starts the sandbox process with `argv` (sandboxCommand's). */
  private startProcess({ command, args }: { command: string; args: string[] }): ChildProcessWithoutNullStreams {
    // Its own process group (detached), so a kill takes everything with it.
    const child = spawn(command, args, { cwd: dirname(this.codeFile), env: {}, stdio: ['pipe', 'pipe', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
    this.child = child;
    this.starts++;
    this.stderr = new TailBuffer(8 * 1024);
    child.stdin.on('error', () => {});
    child.stderr.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      if (this.child !== child) return;
      this.partial += chunk.toString('utf8');
      if (this.partial.length > MAX_LINE_BYTES) return this.fail('FORGE_SANDBOX_OUTPUT', `the result is larger than ${MAX_RESULT_CHARS} characters of JSON`);
      let newline: number;
      while ((newline = this.partial.indexOf('\n')) >= 0) {
        const line = this.partial.slice(0, newline);
        this.partial = this.partial.slice(newline + 1);
        this.onLine(line);
      }
    });
    child.on('error', () => {
      if (this.child === child) this.fail('FORGE_SANDBOX_CRASHED', 'the sandbox process could not start');
    });
    child.on('close', (exitCode, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.mounts.stopped();
      const stderr = this.stderr.toString();
      const current = this.current;
      if (!current) return;
      const outOfMemory = OUT_OF_MEMORY.test(stderr) || signal === 'SIGABRT' || exitCode === 134;
      current.settle(
        outOfMemory
          ? { ok: false, code: 'FORGE_SANDBOX_MEMORY', message: this.memoryMessage(), durationMs: performance.now() - current.started }
          : { ok: false, code: 'FORGE_SANDBOX_CRASHED', message: `the sandbox process ended (${signal ?? `exit code ${exitCode}`})${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`, durationMs: performance.now() - current.started },
      );
    });
    return child;
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    let message: { id?: number; ok?: boolean; output?: string; error?: string; cap?: 'output'; bridge?: number; kind?: 'tool' | 'fetch'; request?: string };
    try {
      message = JSON.parse(line);
    } catch {
      return this.fail('FORGE_SANDBOX_CRASHED', 'the sandbox process broke its protocol');
    }
    const current = this.current;
    if (!current || message.id !== current.id) return;
    if (message.bridge !== undefined) return void this.answerBridge(current, message.bridge, message.kind!, message.request ?? 'null');
    const durationMs = performance.now() - current.started;
    if (message.ok) {
      let value: unknown;
      try {
        value = JSON.parse(message.output ?? 'null');
      } catch {
        return current.settle({ ok: false, code: 'FORGE_SANDBOX_ERROR', message: 'the result is not JSON', durationMs });
      }
      current.settle({ ok: true, value, durationMs });
    } else if (OUT_OF_MEMORY.test(String(message.error))) {
      // An allocation refused at the data cap (new Uint8Array past RLIMIT_DATA) is a RangeError the worker reports;
      // the process is stopped, as V8 may not survive the next refusal, and the call is the memory cap's.
      this.fail('FORGE_SANDBOX_MEMORY', this.memoryMessage());
    } else {
      // The worker stops an oversized result itself, before sending it: that is the output cap, not the code failing.
      current.settle({ ok: false, code: message.cap === 'output' ? 'FORGE_SANDBOX_OUTPUT' : 'FORGE_SANDBOX_ERROR', message: String(message.error ?? 'the code failed'), durationMs });
    }
  }

  private memoryMessage(): string {
    return `the code used more than its memory cap of ${this.limits.memoryMb} MB and was stopped`;
  }

  private async answerBridge(call: Running, bridgeId: number, kind: 'tool' | 'fetch', requestText: string): Promise<void> {
    let answer: { ok: true; value: unknown } | { ok: false; error: string };
    if (++call.bridgeCalls > MAX_BRIDGE_CALLS) answer = { ok: false, error: `one call may make at most ${MAX_BRIDGE_CALLS} tool calls and fetches` };
    else {
      try {
        answer = await call.bridge(kind, JSON.parse(requestText));
      } catch (err) {
        answer = { ok: false, error: (err as Error).message };
      }
    }
    if (this.current !== call || !this.child) return;
    const reply = answer.ok ? { bridge: bridgeId, ok: true, value: JSON.stringify(answer.value ?? null) } : { bridge: bridgeId, ok: false, error: answer.error };
    this.child.stdin.write(JSON.stringify(reply) + '\n');
  }
}
