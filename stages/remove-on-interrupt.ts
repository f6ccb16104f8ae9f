/**
 * A build interrupted (Ctrl-C, a SIGTERM) leaves no half-made staging
 * directory beside the output: the paths are removed, then the process dies
 * of the signal as it would have (exit 130 for Ctrl-C). The last complete
 * output is untouched, since only a finished build replaces it.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isProcessAlive } from '../runtime/process-alive.ts';

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

/**
 * Staging directories beside `outDir` left by builds that could not clean up (killed with SIGKILL, a
 * machine that went down): those of a process that is no longer running are removed.
 */
export function removeStaleStaging(outDir: string): void {
  const pattern = new RegExp(`^\\.${basename(outDir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.staging-(\\d+)(?:\\.previous)?$`);
  let names: string[];
  try {
    names = readdirSync(dirname(outDir));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = pattern.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || isProcessAlive(Number(pid))) continue;
    // A build of another PID namespace (a container sharing the folder) looks gone from here: one touched
    // in the last minute may be such a build, still writing.
    const path = join(dirname(outDir), name);
    if (Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 60_000) rmSync(path, { recursive: true, force: true });
  }
}
