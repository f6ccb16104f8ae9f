/**
 * The closest-name suggestion (runtime/suggest.ts) every "did you mean" uses: it skips a candidate whose
 * length alone puts it past the edit budget, so a long word a request sends costs nothing per candidate,
 * and it suggests what it suggested before.
 */
import { describe, expect, it } from 'vitest';
import { closestMatch } from '../../runtime/suggest.ts';
import { distance } from '../../runtime/vendor/libs.ts';

/** The same choice without the skip: every candidate measured. */
function measuredAll(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    const score = distance(word.toLowerCase(), candidate.toLowerCase());
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

describe('closestMatch', () => {
  const zones = [...Intl.supportedValuesOf('timeZone'), 'UTC'];
  const names = ['string', 'number', 'integer', 'boolean', 'agent_id', 'tool_dirs', 'file_read', 'file_write', 'x', 'ab'];

  it.each(['Europe/Pari', 'europe/paris', 'America/New_Yrok', 'UT', 'Mars/Olympus', 'Asia/Kolkatta', 'Etc/GMT+1', 'A', ''])('picks for %j what measuring every zone picks', (word) => {
    expect(closestMatch(word, zones)).toBe(measuredAll(word, zones));
  });

  it.each(['strng', 'agnet_id', 'xx', 'a', 'file_rd', 'tool_dir', 'booleans', 'İnteger'])('picks for %j what measuring every name picks', (word) => {
    expect(closestMatch(word, names)).toBe(measuredAll(word, names));
  });

  it('answers a 900 kB word at once: no candidate is within its budget', () => {
    const started = performance.now();
    expect(closestMatch(`Europe/${'x'.repeat(900_000)}`, zones)).toBeUndefined();
    // Measured against every zone, this took 2 s of the agent's thread.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
