/**
 * What the Node.js line running this test changes for a built bundle.
 * `npm run test:node-lines` runs this file (with the other bundle-level
 * suites) on every supported line; `npm test` runs it on the developer's.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeMajor } from '../../runtime/node-lines.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

let runtime: string;
const major = nodeMajor();

beforeAll(async () => {
  const project = writeProject({
    'forge.yaml': minimalConfig(),
    'tools/shout.ts': '/**\n * Tool: shout\n * Description: Upper-cases text.\n * Tags: read\n *\n * Input:\n *   text (str): The text.\n */\nexport function execute(args: { text: string }) { return args.text.toUpperCase(); }\n',
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  runtime = join(deployBundle(project).bundle, 'runtime.mjs');
});

describe(`the bundle on Node.js ${process.versions.node}`, () => {
  it(major === 20 ? 'warns once at serve that Node 20 is past end of life' : 'serves without an end-of-life warning', async () => {
    const agent = await startAgentProcess(process.execPath, [runtime, 'serve', '--port', '0', '--no-auth'], { cwd: tempDir() });
    const health = await fetch(`${agent.url}/healthz`);
    expect(health.status).toBe(200);
    const called = await fetch(`${agent.url}/tools/shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'line' }) });
    expect(await called.json()).toMatchObject({ ok: true, value: 'LINE' });
    await agent.stop();
    const warnings = agent.output().match(/end of life/g) ?? [];
    expect(warnings.length).toBe(major === 20 ? 1 : 0);
  });

  it('does not warn on a one-off call', async () => {
    const result = await runProcess(process.execPath, [runtime, 'call', 'shout', '{"text":"x"}'], { cwd: tempDir() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/end of life/);
  });

  it(major >= 22 ? 'writes V8’s compile cache where NODE_COMPILE_CACHE points (the Dockerfile warms it)' : 'ignores NODE_COMPILE_CACHE on a line without it', async () => {
    const cache = join(tempDir(), 'cache');
    const result = await runProcess(process.execPath, [runtime, 'help'], { cwd: tempDir(), env: { NODE_COMPILE_CACHE: cache } });
    expect(result.code, result.stderr).toBe(0);
    const written = existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0;
    if (major >= 22) expect(written).toBeGreaterThan(0);
    else expect(written).toBe(0);
  });

  it(major >= 22 ? 'the forge command keeps V8’s compile cache for its own code between runs' : 'the forge command runs without a compile cache on a line that has none', async () => {
    // enableCompileCache() with no directory uses the OS temp dir: point TMPDIR at an empty one.
    const tmp = tempDir();
    const result = await forge(['--version'], tempDir(), { TMPDIR: tmp });
    expect(result.code, result.stderr).toBe(0);
    const cache = join(tmp, 'node-compile-cache');
    const written = existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0;
    if (major >= 22) expect(written).toBeGreaterThan(0);
    else expect(written).toBe(0);
  });
});
