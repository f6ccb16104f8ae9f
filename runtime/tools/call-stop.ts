/**
 * A tool call's stop (its client gone, the server stopping, cancelled,
 * timed out) as the registry and a tool's worker process wait for it: the
 * part of an AbortSignal they use (aborted, reason, an "abort" listener
 * added and removed), told once, as an abort event is. Not an AbortSignal:
 * on Node 20 making one costs about 4 µs and adding a listener to it about
 * as much again (it is given its prototype after it is made, which leaves
 * it a slow dictionary object), and a warm REST call to a Python tool made
 * two for this alone. ctx.signal stays a real AbortSignal, made on first
 * use, for what needs one (fetch, child_process).
 */
export interface StopNotice {
  readonly aborted: boolean;
  /** Why it stopped (as AbortSignal.reason). */
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class CallStop implements StopNotice {
  private listeners?: (() => void)[];
  private stopped = false;
  private why: unknown;

  get aborted(): boolean {
    return this.stopped;
  }

  get reason(): unknown {
    return this.why;
  }

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    // As on an AbortSignal: a listener added after the stop is never called, one added twice is called once.
    if (this.stopped) return;
    this.listeners ??= [];
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /**
   * Tells every listener, once (as AbortController.abort: without a reason, an AbortError is the reason).
   * One that throws does not keep the others from being told (the error is thrown on, as an event listener's is).
   */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.stopped) return;
    this.stopped = true;
    this.why = reason;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}
