/**
 * How a serving agent stops (SIGTERM in a pod): /readyz turns 503 first and
 * the server keeps serving for the drain delay (while the load balancer
 * takes the pod out of its endpoints), then it stops accepting once
 * connections stop coming (closing-connections.ts), lets in-flight
 * requests finish within the grace period, fails the turns still
 * running then (in the store, so no task stays "working"), and exits.
 *
 * FORGE_DRAIN_DELAY (default 5s under Kubernetes or with a shared store,
 * else 0) and FORGE_SHUTDOWN_GRACE (default 20s, below Kubernetes' 30 s
 * terminationGracePeriodSeconds) are durations such as 500ms, 5s, 1m.
 */
import { parseDuration } from '../duration.ts';

export const DEFAULT_DRAIN_MS = 5000;
export const DEFAULT_GRACE_MS = 20_000;

export interface StopTiming {
  drainMs: number;
  graceMs: number;
}

export function stopTiming(env: NodeJS.ProcessEnv, shared: boolean): StopTiming {
  const inCluster = Boolean(env.KUBERNETES_SERVICE_HOST);
  return {
    drainMs: durationFrom(env, 'FORGE_DRAIN_DELAY') ?? (inCluster || shared ? DEFAULT_DRAIN_MS : 0),
    graceMs: durationFrom(env, 'FORGE_SHUTDOWN_GRACE') ?? DEFAULT_GRACE_MS,
  };
}

function durationFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`${name}="${text}" is not a duration (write it with its unit: 500ms, 5s, 1m)`);
  return ms;
}

