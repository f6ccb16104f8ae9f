/**
 * `npm run bench:node-lines`: what each supported Node.js line's faster start
 * path is worth for a built bundle. For each line (its official binary from
 * the npm registry, cached like `npm run test:node-lines`), in one run:
 *
 *   node -e 0                                        the line's own baseline
 *   runtime.mjs serve → first answered /healthz      without a compile cache
 *   the same with NODE_COMPILE_CACHE warmed          as the Dockerfile does it
 *
 * and prints each start as a ratio against that line's `node -e 0`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeLineBinary } from '../scripts/node-line-binary.mjs';
import { median, timeProcess, withoutMachineStartCosts } from './measure.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 15);
withoutMachineStartCosts();
const lines = (process.env.FORGE_NODE_LINES ?? '20,22,24,26').split(',').map(Number);

const dir = mkdtempSync(join(tmpdir(), 'forge-bench-lines-'));
try {
  // The example agent of this repository, built once; every line runs the same bytes.
  const out = join(dir, 'out');
  const built = spawnSync(process.execPath, [join(root, 'bin', 'forge.cjs'), 'build', '--prod', '--out', out], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`forge build failed:\n${built.stderr}`);
  const runtime = join(out, 'runtime.mjs');

  const rows: string[][] = [];
  for (const line of lines) {
    const node: string = line === Number.parseInt(process.versions.node, 10) ? process.execPath : nodeLineBinary(line);
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const cache = join(dir, `cache-${line}`);
    spawnSync(node, [runtime, 'help'], { env: { ...process.env, NODE_COMPILE_CACHE: cache }, stdio: 'ignore' });
    // Interleaved, one of each per round: the three sides of a row see the same machine.
    const times = { bare: [] as number[], cold: [] as number[], cached: [] as number[] };
    for (let i = 0; i < runs; i++) {
      times.bare.push(...timeProcess(node, ['-e', '0'], { cwd: dir, runs: 1 }));
      times.cold.push(await timeStart(node, runtime, {}));
      times.cached.push(await timeStart(node, runtime, { NODE_COMPILE_CACHE: cache }));
    }
    const [bare, cold, cached] = [times.bare, times.cold, times.cached].map(median);
    rows.push([version, ms(bare), `${ms(cold)} (${(cold / bare).toFixed(2)}×)`, `${ms(cached)} (${(cached / bare).toFixed(2)}×)`, `${(((cold - cached) / cold) * 100).toFixed(0)}%`]);
  }
  const head = ['line', 'node -e 0', 'serve → /healthz', 'with compile cache', 'saved'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const print = (r: string[]) => console.log(r.map((v, c) => v.padEnd(widths[c])).join('  '));
  print(head);
  for (const r of rows) print(r);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Wall time from spawning `serve` to the first answered /healthz. */
async function timeStart(node: string, runtime: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(node, [runtime, 'serve', '--port', '0', '--no-auth'], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d;
      const match = /listening on (http:\/\/\S+)/.exec(err);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${err}`)));
  });
  await (await fetch(`${url}/healthz`)).arrayBuffer();
  const elapsed = performance.now() - started;
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return elapsed;
}

function ms(value: number): string {
  return `${value.toFixed(0)} ms`;
}
