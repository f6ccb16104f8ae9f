/**
 * Reads a request body up to a limit; a bigger body is refused without
 * reading the rest. A body must keep flowing: a gap longer than
 * `idleTimeoutMs`, or a body not complete within `totalTimeoutMs`, ends the
 * read with BodyTimeoutError (the server answers 408 and closes the
 * connection), so a client trickling bytes cannot hold a connection forever.
 */
import type { IncomingMessage } from 'node:http';
import { ForgeError } from '../diagnostics.ts';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends ForgeError {
  constructor(readonly limit: number) {
    super('FORGE_BODY_TOO_LARGE', `request body is larger than ${limit} bytes`);
  }
}

export class BodyTimeoutError extends ForgeError {
  constructor(readonly why: 'idle' | 'total', readonly ms: number) {
    super('FORGE_BODY_TIMEOUT', why === 'idle' ? `the request body stalled for more than ${ms} ms` : `the request body took longer than ${ms} ms`);
  }
}

export interface BodyDeadlines {
  idleTimeoutMs?: number;
  totalTimeoutMs?: number;
}

export function readBody(req: IncomingMessage, limit = DEFAULT_MAX_BODY_BYTES, deadlines: BodyDeadlines = {}): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let idleTimer: NodeJS.Timeout | undefined;
    let totalTimer: NodeJS.Timeout | undefined;
    let armed = false;
    const stop = (err?: Error) => {
      clearImmediate(arming);
      clearTimeout(idleTimer);
      clearTimeout(totalTimer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const armIdle = () => {
      if (!armed || !deadlines.idleTimeoutMs) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => stop(new BodyTimeoutError('idle', deadlines.idleTimeoutMs!)), deadlines.idleTimeoutMs);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return stop(new BodyTooLargeError(limit));
      chunks.push(chunk);
      armIdle();
    };
    const onEnd = () => stop();
    const onError = (err: Error) => stop(err);
    const onAborted = () => stop(new Error('the client went away'));
    // The deadlines are armed a turn of the loop later, and only for a body still arriving then. A body that
    // came in the packet with its headers is taken in by the parser right after the handler's first await
    // (req.complete is false when a handler that awaited anything calls this), and has ended by then: most
    // calls arm no timer.
    const arming = setImmediate(() => {
      armed = true;
      if (deadlines.totalTimeoutMs) totalTimer = setTimeout(() => stop(new BodyTimeoutError('total', deadlines.totalTimeoutMs!)), deadlines.totalTimeoutMs);
      armIdle();
    });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
