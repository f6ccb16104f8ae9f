/**
 * Turns for the programs cli_execute runs in one work dir: most may run
 * together, and some must have the work dir to themselves. git is checked
 * before it runs (the config of every repository it could enter, which
 * launcher-check.ts reads), and reads that config again as it starts: a
 * program running meanwhile (`git -C sub config alias.x '!…'`, cp, tar)
 * could write what the check never saw. So a git run holds its turn alone
 * from its check to its end.
 *
 * Turns are given in the order asked: a run waiting to be alone is not
 * passed by runs asked for later, so a stream of short commands cannot keep
 * git waiting for ever.
 */
export class RunTurns {
  private running = 0;
  private aloneNow = false;
  private readonly waiting: { alone: boolean; start: () => void }[] = [];

  /** Runs `work` in its turn; `alone`: with nothing else running. */
  async run<T>(alone: boolean, work: () => Promise<T>): Promise<T> {
    await this.turn(alone);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private turn(alone: boolean): Promise<void> {
    if (this.waiting.length === 0 && this.fits(alone)) {
      this.take(alone);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push({ alone, start: resolve }));
  }

  private fits(alone: boolean): boolean {
    return alone ? this.running === 0 : !this.aloneNow;
  }

  private take(alone: boolean): void {
    this.running++;
    this.aloneNow = alone;
  }

  private release(): void {
    this.running--;
    if (this.running === 0) this.aloneNow = false;
    while (this.waiting.length > 0 && this.fits(this.waiting[0].alone)) {
      const next = this.waiting.shift()!;
      this.take(next.alone);
      next.start();
    }
  }
}
