/** Timing helpers: whole processes and in-process calls, reported as medians. */
import { execFileSync, spawnSync } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { python3WithoutAsking } from '../runtime/tools/custom/python-interpreter.ts';

/**
 * Settings of this machine, not of Forge, that change what every node
 * process does at start. NODE_EXTRA_CA_CERTS makes Node 20 parse every root
 * certificate before any code runs: 40 ms here, on both sides of a ratio,
 * which flattered every row measured against a process start (a bundle
 * starting in a container pays none of it). Each bench entry calls this
 * first; the processes it measures inherit the result. The test suite's
 * config leaves the same variables out of what its tests start.
 */
export const MACHINE_START_COSTS = ['NODE_EXTRA_CA_CERTS'];

export function withoutMachineStartCosts(): void {
  const removed = MACHINE_START_COSTS.filter((name) => process.env[name] !== undefined);
  for (const name of removed) delete process.env[name];
  const path = pathPastPythonShim();
  if (path) {
    process.env.PATH = path;
    removed.push(`python3 shim (${path.split(delimiter)[0]} put first on PATH)`);
  }
  if (removed.length) console.log(`measured without this machine's ${removed.join(', ')} (bench/measure.ts says why)`);
}

/**
 * PATH with the interpreter's own directory first, when `python3` on PATH is
 * a version manager's shim (pyenv, asdf): a shell script that costs 100–150
 * ms of CPU each time a process asks it which Python it runs. Forge asks it
 * once per bundle start and per fresh cache, as it must; a container has no
 * shim. Undefined when python3 is the interpreter itself, or missing.
 */
export function pathPastPythonShim(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (python3WithoutAsking(env).executable) return undefined;
  try {
    const executable = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return executable ? `${dirname(executable)}${delimiter}${env.PATH ?? ''}` : undefined;
  } catch {
    return undefined;
  }
}

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

export interface TimedCommand {
  command: string;
  args: string[];
  /** Untimed, before each run. */
  before?: () => void;
  env?: NodeJS.ProcessEnv;
  /** Runs per round (default 1): more samples of a short figure for the same rounds. */
  repeat?: number;
}

/**
 * Runs each command once (or `repeat` times) per round, in the order given, for `rounds` rounds,
 * and returns each one's wall times in ms. A figure and its baseline taken in
 * the same rounds see the same machine: on a shared host whose speed drifts
 * over a minute, measuring one after the other skews their ratio.
 */
export function timeInterleaved<Name extends string>(options: { cwd: string; rounds: number }, commands: Record<Name, TimedCommand>): Record<Name, number[]> {
  const times = Object.fromEntries(Object.keys(commands).map((name) => [name, [] as number[]])) as Record<Name, number[]>;
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, { command, args, before, env, repeat = 1 }] of Object.entries(commands) as [Name, TimedCommand][]) {
      times[name].push(...timeProcess(command, args, { cwd: options.cwd, runs: repeat, before, env }));
    }
  }
  return times;
}

/**
 * One line of the bench table. `ratio` is against a baseline measured in
 * the same run; `goal` is the ratio (or, with `absolute`, the figure in ms)
 * to be at or under (over, with higherIsBetter).
 */
export interface BenchRow {
  measure: string;
  result: string;
  ratio?: number;
  against?: string;
  goal?: number;
  /** The figure compared with the goal when it is not a ratio (ms). */
  absolute?: number;
  higherIsBetter?: boolean;
  /** The run behind the figure failed (a red suite): the row never meets its goal, however fast it was. */
  failed?: boolean;
}

export function printRows(rows: BenchRow[]): boolean {
  const cells = rows.map((r) => {
    const figure = r.ratio ?? r.absolute;
    const met = r.goal === undefined || figure === undefined ? undefined : !r.failed && (r.higherIsBetter ? figure >= r.goal : figure <= r.goal);
    const goal = r.goal === undefined ? '' : `${r.higherIsBetter ? '≥' : '≤'} ${r.goal}${r.ratio !== undefined ? '×' : ' ms'}`;
    return [r.measure, r.result, r.ratio !== undefined ? `${r.ratio.toFixed(2)}×` : '', r.against ?? '', goal, met === undefined ? '' : met ? 'met' : 'MISSED'];
  });
  const header = ['measure', 'result', 'ratio', 'against (same run)', 'goal', ''];
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c].length)));
  for (const row of [header, ...cells]) console.log(row.map((cell, c) => (c === 1 || c === 2 ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ').trimEnd());
  return cells.every((c) => c[5] !== 'MISSED');
}
