/**
 * Byte-capped collectors for child process output: the head of stdout (the
 * result) and the tail of stderr (where the error usually is). What was cut
 * is masked, with the piece of a secret the cut went through (known-secrets.ts).
 */
import { redactCutText } from '../known-secrets.ts';

export class HeadBuffer {
  private readonly chunks: Buffer[] = [];
  size = 0;
  overflowed = false;

  constructor(readonly limit: number) {}

  /** Returns false once the limit is passed. */
  push(chunk: Buffer): boolean {
    const room = this.limit - this.size;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.size = this.limit;
      this.overflowed = true;
      return false;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  toString(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.overflowed ? redactCutText(text, 'end') : text;
  }
}

export class TailBuffer {
  private buffer: Buffer = Buffer.alloc(0);
  dropped = false;

  constructor(readonly limit: number) {}

  push(chunk: Buffer): void {
    const joined = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    if (joined.length > this.limit) {
      this.buffer = Buffer.from(joined.subarray(joined.length - this.limit));
      this.dropped = true;
    } else {
      this.buffer = joined;
    }
  }

  toString(): string {
    const text = this.buffer.toString('utf8');
    return this.dropped ? redactCutText(text, 'start') : text;
  }

  /** The last lines, up to `maxChars`, for an error message. */
  tail(maxChars = 2000): string {
    return lastLines(this.toString(), maxChars, this.dropped);
  }
}

/** The last whole lines of `text` that fit in `maxChars`, marked with "…" when anything before them is left out. */
export function lastLines(text: string, maxChars: number, alreadyCut = false): string {
  const trimmed = text.trimEnd();
  if (trimmed.length <= maxChars && !alreadyCut) return trimmed;
  const cut = trimmed.slice(-maxChars);
  const newline = cut.indexOf('\n');
  return '…' + (newline >= 0 && newline < cut.length - 1 ? cut.slice(newline + 1) : cut);
}

/**
 * A process's stderr cut to its last `count` lines for a message, keeping its first error line when that
 * falls before them: Node's "Error: Cannot find module …" is followed by a stack and an object, and the
 * last lines alone said only "code: 'MODULE_NOT_FOUND' … Node.js v20".
 */
export function stderrExcerpt(stderr: string, count: number): string[] {
  const lines = stderr.trimEnd().split('\n');
  const tail = lines.slice(-count);
  if (lines.length <= count) return tail;
  const first = lines.slice(0, -count).find((line) => /^\s*(?:[A-Z]\w*)?(?:Error|Exception)\b[^\n]*:|^\s*error:/i.test(line));
  return first === undefined ? tail : [first, '…', ...tail];
}
