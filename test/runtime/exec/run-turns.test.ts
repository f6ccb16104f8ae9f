/**
 * RunTurns: runs that may overlap do, a run that must be alone waits for
 * those running and holds off the rest, and turns go in the order asked.
 */
import { describe, expect, it } from 'vitest';
import { RunTurns } from '../../../runtime/exec/run-turns.ts';

/** A run that records when it starts and ends, and ends when told to. */
function controlled(turns: RunTurns, log: string[], name: string, alone: boolean) {
  let finish!: () => void;
  const done = turns.run(alone, () => {
    log.push(`${name} start`);
    return new Promise<string>((resolve) => (finish = () => (log.push(`${name} end`), resolve(name))));
  });
  return { done, finish: () => finish() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('RunTurns', () => {
  it('runs shared runs together, and a run that must be alone after them, before any asked later', async () => {
    const turns = new RunTurns();
    const log: string[] = [];
    const a = controlled(turns, log, 'a', false);
    const b = controlled(turns, log, 'b', false);
    const git = controlled(turns, log, 'git', true);
    const c = controlled(turns, log, 'c', false);
    await tick();
    expect(log).toEqual(['a start', 'b start']);
    a.finish();
    await tick();
    expect(log).toEqual(['a start', 'b start', 'a end']); // git still waits for b, and c waits behind git
    b.finish();
    await tick();
    expect(log.slice(3)).toEqual(['b end', 'git start']);
    git.finish();
    await tick();
    expect(log.slice(5)).toEqual(['git end', 'c start']);
    c.finish();
    expect(await Promise.all([a.done, b.done, git.done, c.done])).toEqual(['a', 'b', 'git', 'c']);
  });

  it('gives the turn back when a run throws', async () => {
    const turns = new RunTurns();
    await expect(turns.run(true, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(await turns.run(true, async () => 'next')).toBe('next');
  });
});
