/**
 * One warning when something retried on a timer starts failing, debug lines
 * while it goes on failing, and one line when it works again. A check that
 * runs every second (the scheduler's, the lease reaper's) warned on every
 * failure: a 16-second database restart put dozens of identical lines in
 * the log, and none said when it was over.
 */
import type { Logger } from './tools/model.ts';

export class OutageNotice {
  private failures = 0;
  private since = 0;

  constructor(
    private readonly log: Logger | undefined,
    private readonly words: {
      /** What fails: "scheduler: cannot check scheduled tasks". */
      failing: string;
      /** What goes on meanwhile, said once in the warning: "checks go on". */
      meanwhile: string;
      /** What works again: "scheduler: checking scheduled tasks again". */
      back: string;
    },
  ) {}

  failed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (this.failures++ === 0) {
      this.since = Date.now();
      this.log?.warn(`${this.words.failing}: ${message}; ${this.words.meanwhile}, and a line will say when they work again`);
    } else this.log?.debug(`${this.words.failing}: still failing (${this.failures} times): ${message}`);
  }

  succeeded(): void {
    if (this.failures === 0) return;
    this.log?.info(`${this.words.back}, after ${this.failures} failed attempt${this.failures === 1 ? '' : 's'} over ${Math.round((Date.now() - this.since) / 1000)} s`);
    this.failures = 0;
  }
}
