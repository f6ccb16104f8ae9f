/**
 * The Node side of a tool worker: loads a tool module that exports
 * `execute(args)` and answers requests until stdin closes. Runs inside
 * `node runtime.mjs __worker NAME` (built bundle) or a compiled worker file
 * (sources). Whatever the tool prints goes to stderr: stdout is the protocol.
 */
import { createInterface } from 'node:readline';
import type { WorkerFailure, WorkerRequest, WorkerResponse } from './worker-protocol.ts';

type ToolModule = Record<string, unknown>;

export function serveToolWorker(load: () => Promise<ToolModule>): void {
  const protocolWrite = process.stdout.write.bind(process.stdout);
  const toStderr = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  process.stdout.write = toStderr;

  const reply = (message: WorkerResponse) => {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      text = JSON.stringify({ id: message.id, ok: false, error: { type: 'TypeError', message: `result is not JSON serializable: ${(err as Error).message}` } });
    }
    protocolWrite(text + '\n');
  };

  const ready = load().then(
    (mod) => {
      const execute = (mod.execute ?? (mod.default as ToolModule | undefined)?.execute) as ((args: unknown) => unknown) | undefined;
      if (typeof execute !== 'function') throw new Error('the tool module exports no execute(args) function');
      return execute;
    },
  );
  ready.catch(() => {}); // reported on the first request

  let chain = Promise.resolve();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    chain = chain.then(() => handle(line));
  });
  lines.on('close', () => {
    void chain.then(() => process.exit(0));
  });

  async function handle(line: string) {
    if (!line.trim()) return;
    const request = JSON.parse(line) as WorkerRequest;
    let execute: (args: unknown) => unknown;
    try {
      execute = await ready;
    } catch (err) {
      reply({ id: request.id, ok: false, error: describe(err), fatal: true });
      process.exit(1);
    }
    try {
      const value = await execute(request.args ?? {});
      reply({ id: request.id, ok: true, value: value === undefined ? null : value });
    } catch (err) {
      reply({ id: request.id, ok: false, error: describe(err) });
    }
  }
}

function describe(err: unknown): WorkerFailure {
  if (err instanceof Error) return { type: err.name, message: err.message || err.name, traceback: err.stack };
  return { type: 'Error', message: String(err) };
}
