/**
 * The JavaScript grep's regular expressions run in a worker thread, never on
 * the server's: a pattern that backtracks catastrophically then only keeps
 * its worker busy, and the worker is terminated when the search's timeout
 * (or the call's cancellation) fires. The worker's code is a small string
 * evaluated in the thread, so it needs no file of its own in the bundle.
 */
import { Worker } from 'node:worker_threads';

/** Lines are sent back cut to this (the result cuts them shorter still). */
const MAX_SENT_CHARS = 600;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const decoder = new TextDecoder();
let regex;
parentPort.on('message', (message) => {
  if (message.compile) {
    try {
      regex = new RegExp(message.compile.source, message.compile.flags);
      parentPort.postMessage({ id: message.id, ok: true });
    } catch (err) {
      parentPort.postMessage({ id: message.id, error: String((err && err.message) || err) });
    }
    return;
  }
  // Decoding and splitting happen here too, so a large file costs the server's thread nothing.
  const lines = decoder.decode(message.bytes).split('\\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const hits = [];
  for (let i = 0; i < lines.length && hits.length < message.limit; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (regex.test(line)) hits.push(i);
  }
  const wanted = new Map();
  for (const hit of hits) {
    for (let c = Math.max(0, hit - message.context); c <= Math.min(lines.length - 1, hit + message.context); c++) {
      if (!wanted.has(c)) wanted.set(c, lines[c].length > ${MAX_SENT_CHARS} ? lines[c].slice(0, ${MAX_SENT_CHARS}) : lines[c]);
    }
  }
  parentPort.postMessage({ id: message.id, hits, lines: [...wanted] });
});
`;

export class RegexAborted extends Error {}

export interface FileHits {
  /** Indices (0-based) of matching lines. */
  hits: number[];
  /** Text of the matching lines and their context lines, by index. */
  lines: Map<number, string>;
}

interface Reply {
  id: number;
  ok?: boolean;
  error?: string;
  hits?: number[];
  lines?: [number, string][];
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

  private request(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id }, transfer);
    });
  }

  /** Compiles the pattern in the worker; the error message of an invalid one. */
  async compile(source: string, flags: string): Promise<string | undefined> {
    return (await this.request({ compile: { source, flags } })).error;
  }

  /** The lines of a file's bytes that match (a trailing "\r" is not part of a line), at most `limit`, with `context` lines around each. */
  async match(bytes: Uint8Array, limit: number, context: number): Promise<FileHits> {
    const reply = await this.request({ bytes, limit, context }, bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer as ArrayBuffer] : []);
    return { hits: reply.hits ?? [], lines: new Map(reply.lines ?? []) };
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
