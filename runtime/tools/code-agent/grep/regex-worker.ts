/**
 * The JavaScript grep's regular expressions run in a worker thread, never on
 * the server's: a pattern that backtracks catastrophically then only keeps
 * its worker busy, and the worker is terminated when the search's timeout
 * (or the call's cancellation) fires. The worker's code is a small string
 * evaluated in the thread, so it needs no file of its own in the bundle.
 */
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
let regex;
parentPort.on('message', (message) => {
  if (message.compile) {
    try {
      regex = new RegExp(message.compile.source, message.compile.flags);
      parentPort.postMessage({ id: message.id, ok: true });
    } catch (err) {
      parentPort.postMessage({ id: message.id, error: String(err && err.message || err) });
    }
    return;
  }
  const hits = [];
  const lines = message.lines;
  for (let i = 0; i < lines.length && hits.length < message.limit; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (regex.test(line)) hits.push(i);
  }
  parentPort.postMessage({ id: message.id, hits });
});
`;

export class RegexAborted extends Error {}

interface Reply {
  id: number;
  ok?: boolean;
  error?: string;
  hits?: number[];
}

/** One worker thread holding one compiled pattern; closed (terminated) when the search ends or is aborted. */
export class RegexWorker {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } });
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(signal: AbortSignal) {
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => {
      this.waiting.get(reply.id)?.resolve(reply);
      this.waiting.delete(reply.id);
    });
    const stop = (err: Error) => {
      this.failure ??= err;
      for (const { reject } of this.waiting.values()) reject(this.failure);
      this.waiting.clear();
    };
    this.worker.on('error', stop);
    this.worker.on('exit', () => stop(new RegexAborted('the search was stopped')));
    const onAbort = () => void this.close();
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.worker.once('exit', () => signal.removeEventListener('abort', onAbort));
  }

  private request(message: Record<string, unknown>): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  /** Compiles the pattern in the worker; the error message of an invalid one. */
  async compile(source: string, flags: string): Promise<string | undefined> {
    return (await this.request({ compile: { source, flags } })).error;
  }

  /** Indices of the lines that match (a trailing "\r" is not part of a line), at most `limit`. */
  async match(lines: string[], limit: number): Promise<number[]> {
    return (await this.request({ lines, limit })).hits ?? [];
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
