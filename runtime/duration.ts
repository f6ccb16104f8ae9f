/**
 * A duration written with its unit — "500ms", "10s", "2m" — in
 * milliseconds. What a bare number means differs by where it is written
 * (forge.yaml: seconds; a YAML tool: milliseconds; a docstring: not
 * allowed), so each reader decides that itself.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** The longest delay Node's timers hold (about 24.8 days): a longer one fires at once, with only a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timeout as a timer can hold it: one past MAX_TIMER_MS waits that long, which is as good as never, instead of firing at once. */
export function timerDelay(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}

/** A pause that does not by itself keep the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** At most MAX_TIMER_MS, as every reader arms a timer with it (a timeout, a grace period, a delay). */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)$/i.exec(text.trim());
  return m ? timerDelay(Math.round(Number(m[1]) * UNIT_MS[m[2].toLowerCase()])) : undefined;
}

/**
 * A command line's --timeout: milliseconds as a bare number (30000, what it always took) or a duration
 * with its unit (30s, 2m, 500ms, as docstrings and forge.yaml write them); undefined when it is neither
 * or under 1 ms.
 */
export function parseTimeoutOption(text: string): number | undefined {
  const ms = /^\d+$/.test(text.trim()) ? timerDelay(Number(text.trim())) : parseDuration(text);
  return ms !== undefined && ms >= 1 ? ms : undefined;
}

/** What a --timeout takes, for its error message. */
export const TIMEOUT_OPTION_FORMS = 'milliseconds (30000) or a duration (30s, 2m, 500ms), at least 1 ms';
