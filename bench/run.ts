/**
 * `npm run bench`: builds a generated 200-tool project and measures, in one
 * run and on this machine, Forge against baselines measured alongside it:
 *
 *   cold `forge build --prod`   vs  esbuild alone bundling the same TS tools (a whole process);
 *                               again with Forge's machine-wide cache (the runtime core) empty
 *   no-op rebuild (cache hit)   vs  `node -e 0`
 *   forge tool run (no build)   vs  `node -e 0`
 *   runtime.mjs + forge-runtime.cjs size
 *   Python tool call latency: cold (a process per call) vs warm (a worker), through the runtime;
 *                               a worker's first call (its start included) vs `python3 -c 0`
 *   the running bundle: start to first answer, warm Python over REST, MCP vs REST with
 *   32 clients, memory after 10,000 calls (server-bench.ts)
 *   a builtin call with tracing off and on against the bare registry (telemetry-bench.ts)
 *   the test suite on this machine (suite-bench.ts; --no-suite leaves it out)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRegistry } from '../runtime/tools/create-tools.ts';
import { resolvePython } from '../runtime/tools/custom/python-interpreter.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import { loadProject } from '../stages/load-project.ts';
import { createSourceNodeLauncher } from '../stages/source-node-launcher.ts';
import { StageContext } from '../stages/stage.ts';
import { generateProject } from './generate-project.ts';
import { median, percentile, printRows, timeInterleaved, timeProcess, withoutMachineStartCosts, type BenchRow } from './measure.ts';
import { suiteRow } from './suite-bench.ts';
import { benchServer } from './server-bench.ts';
import { benchVerify } from './verify-bench.ts';
import { pipeEcho } from './pipe-floor.ts';
import { forgeToolRows } from './forge-tool-bench.ts';
import { benchTelemetry } from './telemetry-bench.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const forgeBin = join(root, 'bin', 'forge.cjs');
const node = process.execPath;
const runs = Number(process.env.BENCH_RUNS ?? 7);
withoutMachineStartCosts();

// The `forge` command runs dist/: compile it from these sources first (as the test setup does).
execFileSync(node, ['scripts/build-cli.mjs'], { cwd: root, stdio: 'inherit' });

const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
/** Forge's machine-wide cache for the build rows, apart from the project. */
const forgeCache = mkdtempSync(join(tmpdir(), 'forge-bench-cache-'));
try {
  const project = generateProject(dir);
  console.log(`project: ${project.pythonTools} Python + ${project.tsTools} TypeScript tools in ${dir}\n`);

  // Baseline: esbuild alone, as its own node process, bundling the same TS tools with the same settings.
  const entry = Array.from({ length: project.tsTools }, (_, i) => `export * as t${i} from './tools/ts_tool_${i}.ts';`).join('\n');
  writeFileSync(join(dir, 'baseline-entry.ts'), entry);
  writeFileSync(
    join(dir, 'baseline.mjs'),
    `import { build } from ${JSON.stringify(join(root, 'node_modules/esbuild/lib/main.js'))};\nawait build({ entryPoints: ['baseline-entry.ts'], outfile: 'baseline-out/out.mjs', bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, logLevel: 'silent' });\n`,
  );
  const clean = () => {
    rmSync(join(dir, '.forge'), { recursive: true, force: true });
    rmSync(join(dir, '.forge-output'), { recursive: true, force: true });
  };
  // Cold: the project's cache and output gone. Forge's machine-wide cache keeps the runtime core, the
  // parsed docstrings and the Python check's findings, as GOCACHE keeps Go's standard library and compiled packages; "coldest" empties that too. Each round runs every command
  // once, baselines included, so that a ratio's two sides see the same machine.
  const build = (before?: () => void, repeat?: number) => ({ command: node, args: [forgeBin, 'build', '--prod'], before, env: { FORGE_CACHE_DIR: forgeCache }, repeat });
  timeInterleaved({ cwd: dir, rounds: 1 }, { fill: build(clean) }); // fills Forge's cache
  const timed = timeInterleaved(
    { cwd: dir, rounds: runs },
    {
      esbuildAlone: { command: node, args: ['baseline.mjs'] },
      cold: build(clean),
      noop: build(undefined, 2),
      nodeStart: { command: node, args: ['-e', '0'], repeat: 2 },
      coldest: build(() => (clean(), rmSync(forgeCache, { recursive: true, force: true }))),
    },
  );
  const [esbuildAlone, cold, coldest, noop, nodeStart] = [timed.esbuildAlone, timed.cold, timed.coldest, timed.noop, timed.nodeStart].map(median);
  const bundleSize = statSync(join(dir, '.forge-output', 'runtime.mjs')).size + statSync(join(dir, '.forge-output', 'forge-runtime.cjs')).size;
  const vendorDir = join(dir, '.forge-output', 'vendor');
  const vendorSize = readdirSync(vendorDir).reduce((sum, name) => sum + statSync(join(vendorDir, name)).size, 0);
  // The everyday command without a build: load the 200-tool project, run one tool, print its result.
  const toolRun = median(timeProcess(node, [forgeBin, 'tool', 'run', 'ts_tool_0', '--json', '--param', 'name=bench'], { cwd: dir, runs }));

  const latency = await pythonLatency(dir);
  const server = await benchServer(join(dir, '.forge-output'), dir);
  const telemetry = await benchTelemetry();

  const rows: BenchRow[] = [
    { measure: 'cold forge build --prod (200 tools)', result: ms(cold), ratio: cold / esbuildAlone, against: `esbuild's JS API alone, whole process ${ms(esbuildAlone)}`, goal: 1.5 },
    { measure: 'cold build, Forge\'s cache empty too', result: ms(coldest), ratio: coldest / esbuildAlone, against: `the runtime core bundled as well (first build on a machine)` },
    { measure: 'no-op rebuild', result: ms(noop), ratio: noop / nodeStart, against: `node -e 0 ${ms(nodeStart)}`, goal: 1.2 },
    { measure: 'runtime.mjs + forge-runtime.cjs size', result: `${(bundleSize / 1e6).toFixed(2)} MB`, against: `+ vendor/ ${(vendorSize / 1e6).toFixed(2)} MB, read on first use` },
    { measure: 'forge tool run (a TS tool of the 200, no build)', result: ms(toolRun), ratio: toolRun / nodeStart, against: `node -e 0 ${ms(nodeStart)}` },
    { measure: 'Python call in process, cold (spawn)', result: ms(latency.cold, 2), against: `median of ${latency.coldRuns}` },
    { measure: 'Python worker, first call (its start included)', result: ms(latency.firstCall, 1), ratio: latency.firstCall / latency.pythonStart, against: `python3 -c 0 ${ms(latency.pythonStart, 1)}` },
    { measure: 'Python call in process, warm (worker)', result: ms(latency.warm, 3), ratio: latency.warm / latency.pipe, against: `a bare pipe round trip to python3 ${ms(latency.pipe, 3)} (two wake-ups); median of ${latency.warmRuns}, p99 ${ms(latency.warmP99, 3)}` },
    ...server,
    ...(await forgeToolRows(runs)),
    ...telemetry,
    ...(await suiteRow()),
    benchVerify(join(dir, '.forge-output'), nodeStart, runs),
  ];
  console.log('');
  process.exitCode = printRows(rows) ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(forgeCache, { recursive: true, force: true });
}

function ms(value: number, digits = 0): string {
  return `${value.toFixed(digits)} ms`;
}

/** Calls through the runtime's registry (argument validation, timeout, worker protocol included). */
async function pythonLatency(projectDir: string) {
  const ctx = new StageContext(projectDir);
  const loaded = await loadProject({}, ctx);
  const registryOf = (specs: ToolSpec[]) =>
    createRegistry(specs, { builtins: {}, custom: { workDir: projectDir, resolveSource: (p) => join(projectDir, p), node: createSourceNodeLauncher(projectDir) } }, (s) => s.name).registry;
  const registry = registryOf(loaded.tools.map((t) => t.spec));
  const coldRuns = 30;
  const warmRuns = 2000;
  // A worker's first call: the interpreter's start, the worker host's imports, the tool's module, one call.
  const firstCalls: number[] = [];
  for (let i = 0; i < 15; i++) {
    const fresh = registryOf([loaded.tools.find((t) => t.spec.name === 'py_tool_0')!.spec]);
    const started = performance.now();
    const result = await fresh.execute('py_tool_0', { n: i });
    firstCalls.push(performance.now() - started);
    await fresh.close();
    if (!result.ok) throw new Error(JSON.stringify(result));
  }
  const pythonStart = median(timeProcess(await resolvePython(), ['-c', '0'], { cwd: projectDir, runs: 15 }));
  const coldTimes: number[] = [];
  for (let i = 0; i < coldRuns; i++) {
    const started = performance.now();
    const result = await registry.execute('py_tool_1', { n: i });
    coldTimes.push(performance.now() - started);
    if (!result.ok) throw new Error(JSON.stringify(result));
  }
  await registry.execute('py_tool_0', { n: 0 }); // starts the worker
  // The worker's calls and bare pipe round trips to another python3, in alternating blocks so that
  // both see the same machine: the second is the floor under the first (pipe-floor.ts).
  const echo = pipeEcho(await resolvePython());
  const warmTimes: number[] = [];
  const pipeTimes: number[] = [];
  try {
    for (let i = 0; i < 200; i++) await echo.trip();
    for (let block = 0; block < 8; block++) {
      for (let i = 0; i < warmRuns / 8; i++) {
        const started = performance.now();
        const result = await registry.execute('py_tool_0', { n: i });
        warmTimes.push(performance.now() - started);
        if (!result.ok) throw new Error(JSON.stringify(result));
      }
      for (let i = 0; i < warmRuns / 8; i++) {
        const started = performance.now();
        await echo.trip();
        pipeTimes.push(performance.now() - started);
      }
    }
  } finally {
    echo.close();
  }
  await registry.close();
  return { cold: median(coldTimes), coldRuns, firstCall: median(firstCalls), pythonStart, warm: median(warmTimes), warmP99: percentile(warmTimes, 99), warmRuns, pipe: median(pipeTimes) };
}
