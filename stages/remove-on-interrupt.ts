/**
 * A build interrupted (Ctrl-C, a SIGTERM) leaves no half-made staging
 * directory beside the output: the paths are removed, then the process dies
 * of the signal as it would have (exit 130 for Ctrl-C). The last complete
 * output is untouched, since only a finished build replaces it.
 */
import { rmSync } from 'node:fs';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Arms the removal of what `paths()` names at that moment; the returned function disarms it. */
export function removeOnInterrupt(paths: () => readonly (string | undefined)[]): () => void {
  const disarm = () => {
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    for (const path of paths()) if (path) rmSync(path, { recursive: true, force: true });
    disarm();
    process.kill(process.pid, signal);
  }
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return disarm;
}
