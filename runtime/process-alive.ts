/**
 * Whether a process of this pid namespace runs: signal 0 checks without
 * sending. EPERM means it runs under another user, so it counts as alive.
 * Shared by the file store's lock (runtime/state) and the build's stale
 * staging sweep (stages/), which both judge a holder left behind by its pid.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
