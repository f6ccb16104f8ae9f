/**
 * A call's stop tells its listeners as an AbortSignal's abort event does:
 * once each, not one removed or added after the stop, one added twice once.
 */
import { describe, expect, it } from 'vitest';
import { CallStop } from '../../../runtime/tools/call-stop.ts';

describe('CallStop', () => {
  it('tells each listener once, in the order added, and is aborted from then on', () => {
    const stop = new CallStop();
    const told: string[] = [];
    const first = () => told.push('first');
    stop.addEventListener('abort', first, { once: true });
    stop.addEventListener('abort', () => told.push('second'));
    expect(stop.aborted).toBe(false);
    stop.abort();
    stop.abort();
    expect(stop.aborted).toBe(true);
    expect(told).toEqual(['first', 'second']);
  });

  it('does not tell a listener removed before the stop, nor one added after it', () => {
    const stop = new CallStop();
    const told: string[] = [];
    const removed = () => told.push('removed');
    stop.addEventListener('abort', removed);
    stop.removeEventListener('abort', removed);
    stop.abort();
    stop.addEventListener('abort', () => told.push('late'));
    stop.abort();
    expect(told).toEqual([]);
  });

  it('tells a listener added twice once, as an EventTarget does', () => {
    const stop = new CallStop();
    let told = 0;
    const listener = () => told++;
    stop.addEventListener('abort', listener);
    stop.addEventListener('abort', listener);
    stop.abort();
    expect(told).toBe(1);
  });
});
