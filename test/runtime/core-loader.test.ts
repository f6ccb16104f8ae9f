/**
 * The runtime core's code cache (runtime/core-loader.ts) in a built bundle:
 * written by the first start, used by the next, and never the bytecode of
 * other bytes than the core's own. Each start is a process of its own: in
 * one process V8 reuses what it compiled and never reads the cache.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_CACHE_DIR, CORE_FILE } from '../../runtime/core-loader.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

const SHOUT = '/**\n * Tool: shout\n * Description: Shouts.\n * Tags: read\n *\n * Input:\n *   text (str): The text.\n */\nexport function execute({ text }: { text: string }) {\n  return `shouted: ${text.toUpperCase()}`;\n}\n';

let project: string;
beforeAll(async () => {
  project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'), 'tools/shout.ts': SHOUT });
  expect((await forge(['build', '--prod'], project)).code).toBe(0);
});

/** Runs the bundle's command with FORGE_VERBOSE=1; `cache` is what the core's code cache did, as the runtime says. */
async function bundleRun(bundle: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; cache: string | undefined }> {
  const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1', ...env } });
  return { code: result.code, stdout: result.stdout, cache: /\[forge\] code cache: (\w+)/.exec(result.stderr)?.[1] };
}

const cacheFiles = (bundle: string) => (existsSync(join(bundle, CODE_CACHE_DIR)) ? readdirSync(join(bundle, CODE_CACHE_DIR)) : []);

describe("the runtime core's code cache", () => {
  it('is written by the first start and used by the next, which works as the first did (the core and a TS tool worker)', async () => {
    const { bundle } = deployBundle(project);
    expect(cacheFiles(bundle)).toEqual([]);
    const first = await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(first).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'missing' });
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect(cacheFiles(bundle)[0]).toMatch(/^forge-runtime\.cjs-.*\.v8cache$/);
    const again = await bundleRun(bundle, ['call', 'shout', '{"text": "again"}']);
    expect(again).toMatchObject({ code: 0, stdout: 'shouted: AGAIN\n', cache: 'used' });
    expect(cacheFiles(bundle)).toHaveLength(1);
  });

  it('is not written by a TS tool worker: its agent, started before it, writes one', async () => {
    const { bundle } = deployBundle(project);
    // The worker serves calls on stdin until it closes (here at once), as its agent starts it.
    const worker = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), '__worker', 'shout'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' }, input: '' });
    expect(worker.code).toBe(0);
    expect(cacheFiles(bundle)).toEqual([]);
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('missing');
    expect(cacheFiles(bundle)).toHaveLength(1);
  });

  it('is written by serve once it listens, while it serves', async () => {
    const { bundle } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' } });
    try {
      // Said once the write is done.
      await agent.waitFor('[forge] code cache: missing');
      expect(cacheFiles(bundle)).toHaveLength(1);
      const res = await fetch(`${agent.url}/tools/shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text": "served"}' });
      expect(await res.json()).toMatchObject({ value: 'shouted: SERVED' });
    } finally {
      await agent.stop();
    }
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('used');
  });

  it('never runs the bytecode cached for other bytes of the same length', async () => {
    const { bundle } = deployBundle(project);
    expect((await bundleRun(bundle, ['help'])).cache).toBe('missing');
    expect((await bundleRun(bundle, ['help'])).stdout).toContain('usage: node runtime.mjs <command>');
    // An edit that keeps the core's length: V8 itself compares no more than that with its cached data.
    const core = join(bundle, CORE_FILE);
    const text = readFileSync(core, 'latin1');
    expect(text).toContain('usage: node runtime.mjs <command>');
    writeFileSync(core, text.replace('usage: node runtime.mjs <command>', 'USAGE: NODE RUNTIME.MJS <COMMAND>'), 'latin1');
    const edited = await bundleRun(bundle, ['help']);
    expect(edited.stdout).toContain('USAGE: NODE RUNTIME.MJS <COMMAND>');
    expect(edited.cache).toBe('missing');
    // The edited core's own cache replaces the old one (same file, same Node): one left.
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect((await bundleRun(bundle, ['help'])).stdout).toContain('USAGE: NODE RUNTIME.MJS <COMMAND>');
  });

  it('is refused when it is not V8 data, and written anew', async () => {
    const { bundle } = deployBundle(project);
    await bundleRun(bundle, ['tools']);
    const [name] = cacheFiles(bundle);
    writeFileSync(join(bundle, CODE_CACHE_DIR, name), 'not a code cache');
    const refused = await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(refused).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'refused' });
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('used');
  });

  it('is neither read nor written with FORGE_VERIFY_KEY set (signed bytes only) or FORGE_CODE_CACHE=off, by the agent or its TS tool workers', async () => {
    const { bundle } = deployBundle(project);
    const key = execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519'], { encoding: 'utf8' });
    const publicKey = execFileSync('openssl', ['pkey', '-pubout'], { input: key, encoding: 'utf8' });
    // `call` does not check the signature (serve and verify do): what matters here is that the key is set.
    expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'], { FORGE_VERIFY_KEY: publicKey })).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'off' });
    expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'], { FORGE_CODE_CACHE: 'off' })).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'off' });
    expect(cacheFiles(bundle)).toEqual([]);
    // A cache that is there is not read either.
    await bundleRun(bundle, ['tools']);
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect((await bundleRun(bundle, ['tools'], { FORGE_VERIFY_KEY: publicKey })).cache).toBe('off');
  });

  it('is not needed where it cannot be written (a bundle its user cannot write, as in an image): every start works', async () => {
    const { bundle } = deployBundle(project);
    // A file where the folder would go: nothing can be written under it, whoever runs the bundle.
    writeFileSync(join(bundle, CODE_CACHE_DIR), '');
    for (let run = 0; run < 2; run++) expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'])).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'missing' });
  });
});
