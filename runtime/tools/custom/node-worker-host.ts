/**
 * The Node side of a tool worker: loads a tool module that exports
 * `execute(args, ctx)` and answers requests until stdin closes. Runs inside
 * `node runtime.mjs __worker NAME` (built bundle) or a compiled worker file
 * (sources). Answers go to fd 3 (worker-protocol.ts): whatever the tool, or
 * a process it starts, prints on stdout or stderr is its log.
 *
 * `ctx.registry.execute(name, args)` sends the call to the host, which runs
 * it through the caller's scoped registry (only its composedOf, under the
 * approval policy) and answers; `ctx.tmpDir` is created on first use and
 * removed by the host after the call.
 */
import { mkdirSync, rmSync, writeSync } from 'node:fs';
import { sweepStrayProcesses } from './stray-processes.ts';
import type { ToolResult } from '../model.ts';
import { PROTOCOL_FD, type WorkerFailure, type WorkerRequest, type WorkerResponse, type WorkerToolCall, type WorkerToolReply } from './worker-protocol.ts';

type ToolModule = Record<string, unknown>;
type Execute = (args: unknown, ctx: WorkerToolContext) => unknown;

/** What a worker-hosted tool's execute() gets as its second argument. */
export interface WorkerToolContext {
  registry: { execute(name: string, args?: unknown): Promise<ToolResult> };
  workDir: string;
  readonly tmpDir: string;
  depth: number;
  signal: AbortSignal;
  log: { debug(message: string): void; info(message: string): void; warn(message: string): void };
}

export function serveToolWorker(load: () => Promise<ToolModule>): void {
  // Answers go to fd 3, written synchronously (an answer is out before a fatal exit); stdout is the tool's, and logged.
  const protocolWrite = (text: string) => void writeSync(PROTOCOL_FD, text);

  const send = (message: WorkerResponse | WorkerToolCall) => {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      text = JSON.stringify({ id: message.id, ok: false, error: { type: 'TypeError', message: `result is not JSON serializable: ${(err as Error).message}` } });
    }
    protocolWrite(text + '\n');
  };

  const ready = load().then((mod) => {
    // export function execute, export default { execute }, or export default function execute.
    const execute = (mod.execute ?? (typeof mod.default === 'function' ? mod.default : (mod.default as ToolModule | undefined)?.execute)) as Execute | undefined;
    if (typeof execute !== 'function') throw new Error('the tool module exports no execute(args) function');
    return execute;
  });
  ready.catch(() => {}); // reported on the first request

  let nextCall = 1;
  const waiting = new Map<number, (result: ToolResult) => void>();
  const log = (level: string) => (message: string) => void process.stderr.write(`[${level}] ${message}\n`);

  let chain = Promise.resolve();
  // Loaded here rather than at the bundle's top: only a tool worker reads lines from stdin.
  void import('node:readline').then(({ createInterface }) => {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (!line.trim()) return;
      const message = JSON.parse(line) as WorkerRequest | WorkerToolReply;
      // Replies to sub-tool calls arrive while a request is running: they never wait in the queue.
      if ('reply' in message) {
        waiting.get(message.reply)?.(message.result);
        waiting.delete(message.reply);
        return;
      }
      chain = chain.then(() => handle(message));
    });
    lines.on('close', () => {
      void chain.then(() => process.exit(0));
    });
  });

  const workerLog = { debug: log('debug'), info: log('info'), warn: log('warn') };
  const registry = (request: WorkerRequest): WorkerToolContext['registry'] => ({
    execute: (tool, args = {}) =>
      new Promise<ToolResult>((resolve) => {
        const call = nextCall++;
        waiting.set(call, resolve);
        send({ id: request.id, call, tool, args });
      }),
  });
  const contextFor = (request: WorkerRequest): WorkerToolContext => new WorkerCallContext(request, registry(request), workerLog);

  async function handle(request: WorkerRequest) {
    const started = performance.now();
    let execute: Execute;
    try {
      execute = await ready;
    } catch (err) {
      send({ id: request.id, ok: false, error: describe(err), fatal: true });
      process.exit(1);
    }
    let message: WorkerResponse;
    try {
      const value = await execute(request.args ?? {}, contextFor(request));
      message = { id: request.id, ok: true, value: value === undefined ? null : value };
    } catch (err) {
      message = { id: request.id, ok: false, error: describe(err) };
    }
    // The call is over: what it started goes (in the sandbox) before the answer, and so does its
    // temporary dir (the sandbox's /tmp is private: the host cannot remove it).
    await sweepStrayProcesses(started);
    if (request.tmpDir) rmSync(request.tmpDir, { recursive: true, force: true });
    send(message);
  }
}

/**
 * One call's context. A class, not an object literal with getters (V8 kept
 * every call's objects alive through young-generation GCs with the literal;
 * see the registry's CallContext): its temp dir is made on first use, and
 * its signal, which never aborts (a stopped call ends with the worker
 * process), only if the tool asks for one.
 */
class WorkerCallContext implements WorkerToolContext {
  readonly workDir = process.cwd();
  readonly depth: number;
  private created = false;
  private made?: AbortSignal;

  constructor(
    private readonly request: WorkerRequest,
    readonly registry: WorkerToolContext['registry'],
    readonly log: WorkerToolContext['log'],
  ) {
    this.depth = request.depth ?? 0;
  }

  get tmpDir(): string {
    const dir = this.request.tmpDir;
    if (!dir) throw new Error('this call has no temporary directory');
    if (!this.created) {
      // Not recursive: the path is fresh, so an existing one is refused rather than reused.
      mkdirSync(dir, { mode: 0o700 });
      this.created = true;
    }
    return dir;
  }

  get signal(): AbortSignal {
    return (this.made ??= new AbortController().signal);
  }
}

function describe(err: unknown): WorkerFailure {
  if (err instanceof Error) return { type: err.name, message: err.message || err.name, traceback: err.stack };
  return { type: 'Error', message: String(err) };
}
