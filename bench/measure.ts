/** Timing helpers: whole processes and in-process calls, reported as medians. */
import { spawnSync } from 'node:child_process';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs a command `runs` times (after `before`, untimed) and returns each wall time in ms. */
export function timeProcess(command: string, args: string[], options: { cwd: string; runs: number; before?: () => void; env?: NodeJS.ProcessEnv }): number[] {
  const times: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    options.before?.();
    const started = performance.now();
    const result = spawnSync(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    times.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  }
  return times;
}
