/**
 * A circuit for one tool: after `threshold` calls in a row found its
 * process dead or unable to start, the circuit opens and calls are refused
 * at once (a clear error, not another crash) for a cool-down; then one
 * trial call is let through (half-open): it closes the circuit if it works
 * and opens it again if not. Only this tool is affected: the agent stays
 * ready and its other tools keep serving.
 */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitOptions {
  threshold?: number;
  coolDownMs?: number;
  now?: () => number;
}

export const DEFAULT_CIRCUIT_COOL_DOWN_MS = 30_000;

export class CircuitBreaker {
  private failuresInARow = 0;
  private openedAt = 0;
  private trialRunning = false;
  private opened = false;
  lastFailure = '';
  readonly threshold: number;
  readonly coolDownMs: number;
  private readonly now: () => number;

  constructor(options: CircuitOptions = {}) {
    this.threshold = options.threshold ?? 3;
    this.coolDownMs = options.coolDownMs ?? DEFAULT_CIRCUIT_COOL_DOWN_MS;
    this.now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    if (!this.opened) return 'closed';
    return this.now() - this.openedAt >= this.coolDownMs ? 'half-open' : 'open';
  }

  /** Milliseconds until a trial call is allowed (0 when calls pass). */
  get retryInMs(): number {
    return this.state === 'open' ? this.coolDownMs - (this.now() - this.openedAt) : 0;
  }

  /** Whether a call may run now; in half-open, only one trial at a time. */
  tryEnter(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.trialRunning) return false;
    this.trialRunning = true;
    return true;
  }

  succeeded(): void {
    this.failuresInARow = 0;
    this.opened = false;
    this.trialRunning = false;
  }

  failed(reason: string): void {
    this.lastFailure = reason;
    this.failuresInARow++;
    if (this.trialRunning || this.failuresInARow >= this.threshold) {
      this.opened = true;
      this.openedAt = this.now();
    }
    this.trialRunning = false;
  }

  /** A call that ended without telling anything about the tool's health (cancelled). */
  released(): void {
    this.trialRunning = false;
  }
}
