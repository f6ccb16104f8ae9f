/**
 * The runtime's slots for tool processes: how many run at once, how many
 * calls wait, first come first served, and what a cancelled waiting call
 * gives back. The flood through every front end and kind of tool process is
 * test/e2e/process-flood.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ProcessSlots, type SlotGrant } from '../../../runtime/exec/process-slots.ts';

const granted = (grant: SlotGrant) => {
  if ('refused' in grant) throw new Error(`refused: ${grant.refused}`);
  return grant;
};

describe('ProcessSlots', () => {
  it('grants `running` slots at once, queues `waiting` more in order, and refuses the rest as busy', async () => {
    const slots = new ProcessSlots(2, 2);
    const [a, b] = [granted(await slots.acquire()), granted(await slots.acquire())];
    const order: string[] = [];
    const third = slots.acquire().then((g) => (order.push('third'), granted(g)));
    const fourth = slots.acquire().then((g) => (order.push('fourth'), granted(g)));
    expect(await slots.acquire()).toEqual({ refused: 'busy' });
    expect(slots.waitingNow).toBe(2);
    a.release();
    (await third).release();
    b.release();
    (await fourth).release();
    expect(order).toEqual(['third', 'fourth']);
    // All free again: a release given twice frees one slot only.
    const c = granted(await slots.acquire());
    c.release();
    c.release();
    const held = [granted(await slots.acquire()), granted(await slots.acquire())];
    const waits = slots.acquire();
    let done = false;
    void waits.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    held[0].release();
    granted(await waits).release();
    held[1].release();
  });

  it('takes a waiting call that is cancelled out of the queue at once, so its place serves another', async () => {
    const slots = new ProcessSlots(1, 1);
    const holder = granted(await slots.acquire());
    const controller = new AbortController();
    const cancelled = slots.acquire(controller.signal);
    expect(await slots.acquire()).toEqual({ refused: 'busy' });
    controller.abort();
    expect(await cancelled).toEqual({ refused: 'cancelled' });
    expect(slots.waitingNow).toBe(0);
    const next = slots.acquire();
    holder.release();
    granted(await next).release();
    expect(await slots.acquire(AbortSignal.abort())).toEqual({ refused: 'cancelled' });
  });
});
