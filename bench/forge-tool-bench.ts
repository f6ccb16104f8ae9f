/**
 * forge_tool: how long a forge takes (request → registered: build, the
 * binding tests in a fresh sandbox process, judge, store) against starting
 * a bare `node -e 0`, and a warm call to a forged sandboxed tool against a
 * warm call to a custom JavaScript tool doing the same work (its worker
 * process), both through the same registry, measured in the same run.
 *
 *   npm run bench:forge-tool   (also part of `npm run bench`)
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCatalogEntry } from '../runtime/tools/catalog.ts';
import { createRegistry } from '../runtime/tools/create-tools.ts';
import type { ForgeResult } from '../runtime/tools/emergent/forge-request.ts';
import { toSpec } from '../runtime/tools/model.ts';
import { loadProject } from '../stages/load-project.ts';
import { createSourceNodeLauncher } from '../stages/source-node-launcher.ts';
import { StageContext } from '../stages/stage.ts';
import { median, percentile, printRows, timeProcess, withoutMachineStartCosts, type BenchRow } from './measure.ts';

const JS_TOOL = `/**
 * Tool: add_js
 * Description: Add two numbers.
 * Tags: read
 *
 * Input:
 *   a (float): First.
 *   b (float): Second.
 */
export function execute(input) { return { sum: input.a + input.b }; }
`;

const request = (name: string) => ({
  name,
  description: 'Add two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a + input.b }; }' },
  testCases: [{ input: { a: 1, b: 2 }, expectedOutput: { sum: 3 } }, { input: { a: 0.5, b: 0.25 }, expectedOutput: { sum: 0.75 } }],
});

export async function forgeToolRows(runs = Number(process.env.BENCH_RUNS ?? 7)): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-forge-'));
  try {
    mkdirSync(join(dir, 'tools'));
    writeFileSync(join(dir, 'forge.yaml'), 'agent_id: forge-bench\nversion: 1.0.0\nemergent: { max_tools: 1000, calls_per_minute: 10000 }\n');
    writeFileSync(join(dir, 'tools', 'add_js.js'), JS_TOOL);
    const loaded = await loadProject({}, new StageContext(dir));
    const forgeTool = (await findCatalogEntry('forge_tool')!.load()).default;
    const specs = [...loaded.tools.filter((t) => !t.builtin).map((t) => t.spec), toSpec({ ...forgeTool.spec, config: { max_tools: 1000, calls_per_minute: 10000 } })];
    const { registry, diagnostics } = createRegistry(specs, { builtins: { forge_tool: forgeTool }, custom: { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir) } }, (s) => s.name);
    if (diagnostics.length) throw new Error(diagnostics.map((d) => d.message).join('\n'));

    const forgeRuns = runs * 3;
    const forgeTimes: number[] = [];
    for (let i = 0; i < forgeRuns; i++) {
      const started = performance.now();
      const result = await registry.execute('forge_tool', request(`add_${i}`), { session: 'bench' });
      forgeTimes.push(performance.now() - started);
      if (!result.ok || !(result.value as ForgeResult).success) throw new Error(JSON.stringify(result));
    }
    const nodeStart = median(timeProcess(process.execPath, ['-e', '0'], { cwd: dir, runs: runs * 2 }));

    const warm = async (name: string) => {
      const times: number[] = [];
      await registry.execute(name, { a: 1, b: 1 }, { session: 'bench' }); // starts the process
      for (let i = 0; i < 2000; i++) {
        const started = performance.now();
        const result = await registry.execute(name, { a: i, b: 1 }, { session: 'bench' });
        times.push(performance.now() - started);
        if (!result.ok) throw new Error(JSON.stringify(result));
      }
      return times;
    };
    const custom = await warm('add_js');
    const forged = await warm('add_0');
    await registry.close();
    const forgeMedian = median(forgeTimes);
    return [
      { measure: 'forge_tool: request → registered (sandbox, 2 tests)', result: `${forgeMedian.toFixed(0)} ms`, ratio: forgeMedian / nodeStart, against: `node -e 0 ${nodeStart.toFixed(0)} ms (median of ${forgeRuns})`, goal: 4 },
      { measure: 'forged tool, warm call (sandbox process)', result: `${median(forged).toFixed(3)} ms`, ratio: median(forged) / median(custom), against: `custom JS tool warm ${median(custom).toFixed(3)} ms; p99 ${percentile(forged, 99).toFixed(3)} vs ${percentile(custom, 99).toFixed(3)} ms`, goal: 1.5 },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  withoutMachineStartCosts();
  process.exitCode = printRows(await forgeToolRows()) ? 0 : 1;
}
