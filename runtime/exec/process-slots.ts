/**
 * How many tool processes this runtime runs at once, and how many calls may
 * wait for one. Every call of a script-style tool, a YAML step, cli_execute,
 * local_shell or test_runner starts a process: without a bound, a flood of
 * calls (a REST or MCP client, a model's parallel calls, a schedule gone
 * wrong) starts as many processes as it sends calls, each within its own
 * sandbox caps but together past the machine's memory and process table.
 *
 * A call past `running` waits its turn, first come first served, and leaves
 * the queue as soon as it is cancelled or times out; past `waiting`, it is
 * refused at once (FORGE_TOOL_BUSY). FORGE_TOOL_PROCESSES sets `running`
 * (default: four per core, at least 8) and FORGE_TOOL_PROCESS_QUEUE
 * `waiting` (default: eight times `running`). A tool worker, a process that
 * runs one call at a time, keeps its queue the same way (ProcessSlots(1, n)).
 */
import { availableParallelism } from 'node:os';
import type { StopNotice } from '../tools/call-stop.ts';

export type SlotGrant = { release: () => void } | { refused: 'busy' | 'cancelled' };

export class ProcessSlots {
  private inUse = 0;
  private readonly queue: { grant: () => void }[] = [];

  constructor(
    readonly running: number,
    readonly waiting: number,
  ) {}

  /** A slot (call `release` when the process has ended), or why there is none. */
  acquire(signal?: StopNotice): Promise<SlotGrant> {
    if (signal?.aborted) return Promise.resolve({ refused: 'cancelled' });
    if (this.inUse < this.running) return Promise.resolve(this.take());
    if (this.queue.length >= this.waiting) return Promise.resolve({ refused: 'busy' });
    return new Promise<SlotGrant>((resolve) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take());
        },
      };
      const onAbort = () => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) this.queue.splice(at, 1);
        resolve({ refused: 'cancelled' });
      };
      this.queue.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Calls waiting for a slot, for messages. */
  get waitingNow(): number {
    return this.queue.length;
  }

  private take(): SlotGrant {
    this.inUse++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.inUse--;
        this.queue.shift()?.grant();
      },
    };
  }
}

let shared: ProcessSlots | undefined;

/** The runtime's slots for tool processes, sized from the environment when first used. */
export function toolProcessSlots(env: NodeJS.ProcessEnv = process.env): ProcessSlots {
  if (!shared) {
    const running = wholeNumberSetting(env.FORGE_TOOL_PROCESSES, 1) ?? Math.max(8, 4 * availableParallelism());
    shared = new ProcessSlots(running, wholeNumberSetting(env.FORGE_TOOL_PROCESS_QUEUE, 0) ?? 8 * running);
  }
  return shared;
}

/** A count from the environment ("32"), at least `least`; undefined when unset or not a whole number. */
export function wholeNumberSetting(text: string | undefined, least = 0): number | undefined {
  const trimmed = text?.trim();
  if (!trimmed || !/^\d+$/.test(trimmed)) return undefined;
  return Math.max(least, Number(trimmed));
}
