/**
 * Gathers the pieces of a model's streamed text into chunks sent at a pace.
 * The A2A SDK saves the task at every artifact event, loading and copying it
 * whole, parts and all, so one event per piece (a token, often) made a turn's
 * cost grow with the square of its pieces: 2,000 pieces took 8 s of the
 * server's one thread, 4,000 took 32 s, and every other client waited. Any
 * client that asks for a long answer could do that.
 *
 * The first piece goes out at once (the reader sees the answer start); then
 * at most one chunk per gap, the gap growing with every chunk sent, from
 * 50 ms to 1 s: a turn streams at most about 500 chunks in its first four
 * minutes, and one a second after that. The text is the same, piece for
 * piece; nothing is held back past the gap.
 */
const FIRST_GAP_MS = 50;
const GAP_GROWTH_MS = 2;
const LONGEST_GAP_MS = 1000;

export class TextChunks {
  private pending = '';
  private sent = 0;
  private lastSentAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly publish: (text: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  add(delta: string): void {
    this.pending += delta;
    if (this.timer) return;
    const wait = this.lastSentAt + this.gap() - this.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Sends what is gathered now (before a tool call's event or the turn's end, so the order holds). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    this.sent++;
    this.lastSentAt = this.now();
    this.publish(text);
  }

  /** Drops a pending send (the turn is over and said so). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private gap(): number {
    return Math.min(LONGEST_GAP_MS, FIRST_GAP_MS + GAP_GROWTH_MS * this.sent);
  }
}
