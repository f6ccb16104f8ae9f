/**
 * /readyz's view of the state store: ready unless the store failed several
 * checks in a row (one slow ping during a failover must not take every pod
 * out of the load balancer at once). The model is never checked: a model
 * outage is not something another replica could fix.
 */
import type { StateStore } from '../state/store.ts';

export const FAILURES_BEFORE_UNREADY = 3;
/** Long enough for a store that answers; a silent one (a partition) is not waited for past it. */
const PING_TIMEOUT_MS = 2000;

export function storeReadiness(store: Pick<StateStore, 'ping'>, failuresBeforeUnready = FAILURES_BEFORE_UNREADY): () => Promise<string | undefined> {
  let failures = 0;
  let lastError = '';
  return async () => {
    try {
      await pingWithin(() => store.ping());
      failures = 0;
    } catch (err) {
      failures++;
      lastError = (err as Error).message;
    }
    return failures >= failuresBeforeUnready ? `the state store failed ${failures} checks in a row: ${lastError}` : undefined;
  };
}

/** `ping()`, failed if it does not answer within `ms`; its timer ends with it. */
export async function pingWithin(ping: () => Promise<void>, ms = PING_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    timer.unref();
  });
  try {
    await Promise.race([ping(), silent]);
  } finally {
    clearTimeout(timer);
  }
}
