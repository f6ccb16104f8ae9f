import { distance } from './vendor/libs.ts';

/**
 * The closest candidate to a misspelt word, if it is close enough to be what
 * the user meant ("strng" → "string", "agnet_id" → "agent_id").
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  // Allow roughly one edit per three characters, and always at least one or two.
  const budget = Math.max(2, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    // Never within the budget: the distance is at least the difference in length. Skipping these keeps a
    // long word (a request's 900 kB "time zone") from costing its length times each candidate's.
    if (Math.abs(other.length - lower.length) > budget) continue;
    const score = distance(lower, other);
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  if (best === undefined) return undefined;
  return bestScore <= budget ? best : undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const match = closestMatch(word, candidates);
  return match ? `did you mean "${match}"?` : undefined;
}

/**
 * A stricter test for where a word may also be ordinary prose: one edit away,
 * or the same letters in another order ("Tgas" → "Tags", but not "Note" → "Tool").
 */
export function likelyTypo(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const letters = [...lower].sort().join('');
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    if (distance(lower, c) <= 1) return candidate;
    if (c.length === lower.length && [...c].sort().join('') === letters) return candidate;
  }
  return undefined;
}
