/**
 * The sandbox mounts a long-lived tool process (a tool's warm worker, a
 * forged tool's process) was started under, and whether one started now
 * would get others: a credential store made since (`aws configure` in
 * another terminal), a repository `git init`-ed in the work dir. Such a
 * process is stopped and started again before its next call, instead of
 * keeping what it could see when it started.
 */
import { toolMountsKey } from './tool-sandbox.ts';

/**
 * How often, at most, the mounts are compared: the comparison costs about half a millisecond (a stat of
 * every credential store there could be), more than a warm call.
 */
const CHECK_EVERY_MS = 1000;

export class MountsAtStart {
  private key = '';
  private checkedAt = 0;

  /** Notes the mounts of now; called before a process's own are worked out, so that a store made in between restarts it, never goes unhidden. */
  starting(): void {
    this.key = toolMountsKey();
    this.checkedAt = Date.now();
  }

  /** Whether a process started now would be mounted otherwise, looked at once a second at most. */
  changed(): boolean {
    const now = Date.now();
    if (now - this.checkedAt < CHECK_EVERY_MS) return false;
    this.checkedAt = now;
    return toolMountsKey() !== this.key;
  }
}
