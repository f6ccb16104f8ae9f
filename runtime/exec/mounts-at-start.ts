/**
 * The sandbox mounts a long-lived tool process (a tool's warm worker, a
 * forged tool's process) was started under, watched while it runs: a
 * credential store made since (`aws configure` in another terminal) or
 * replaced (a rename takes the stand-in over the old file away in every
 * sandbox), a repository `git init`-ed in the work dir. An idle process is
 * stopped within a second, and a busy one before its next call; the next
 * call starts one under the mounts of now. What a process does while a
 * call runs, or in threads of its own, sees the store until then.
 */
import { toolMountsKey, type ToolMountsKey } from './tool-sandbox.ts';

/**
 * How often the mounts are looked at: once a second for the whole process, however many processes
 * there are (a look costs about half a millisecond, a stat of every credential store there could be;
 * more in a repository with many submodules).
 */
const CHECK_EVERY_MS = 1000;

/** What a process's sandbox takes from the host that can change: only what is hidden (a forged tool's), or the work dir's repository too. */
type MountsScope = keyof ToolMountsKey;

let latest: { key: ToolMountsKey | undefined; at: number } | undefined;
const watching = new Set<MountsAtStart>();
let timer: NodeJS.Timeout | undefined;

/** The mounts of now: looked at again when `fresh`, or when the last look is a second old (a clock that cannot step back). */
function mountsNow(fresh: boolean): ToolMountsKey | undefined {
  const now = performance.now();
  if (fresh || !latest || now - latest.at >= CHECK_EVERY_MS) latest = { key: toolMountsKey(fresh), at: now };
  return latest.key;
}

function look(): void {
  mountsNow(true);
  for (const process of [...watching]) if (process.changed()) process.onChanged();
}

export class MountsAtStart {
  private key?: string;

  constructor(
    private readonly scope: MountsScope,
    /** Told, once a second while it lasts, that the running process's mounts are not those of now. */
    readonly onChanged: () => void,
  ) {}

  /**
   * Notes the mounts of now for a process about to start, and watches them while it runs. Called before
   * the process's own mounts are worked out: a store made in between restarts it, never goes unhidden.
   */
  starting(): void {
    this.key = mountsNow(true)?.[this.scope];
    if (this.key === undefined) return; // no sandbox: nothing mounted, nothing to watch
    watching.add(this);
    if (!timer) {
      timer = setInterval(look, CHECK_EVERY_MS);
      timer.unref();
    }
  }

  /** The process is gone. */
  stopped(): void {
    this.key = undefined;
    watching.delete(this);
    if (!watching.size && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  /** Whether a process started now would be mounted otherwise than the running one (as of a second ago at most). */
  changed(): boolean {
    if (this.key === undefined) return false;
    const key = mountsNow(false);
    return key !== undefined && key[this.scope] !== this.key;
  }
}
