/**
 * Calls are tied to the worker process that runs them: a timed-out or
 * cancelled call kills its worker, and the next caller's call — queued
 * behind it or sent right after — runs on a fresh worker and succeeds,
 * never failing as "killed by SIGKILL" (the old worker's exit settling the
 * wrong call). Bounded loops, since this is a race.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCustomTool } from '../../../../runtime/tools/custom/custom-tool.ts';
import { silentLogger, ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { parseToolFile } from '../../../../stages/parse-docstrings.ts';
import { createSourceNodeLauncher } from '../../../../stages/source-node-launcher.ts';
import { tempDir } from '../../../helpers/project.ts';

const registries: ToolRegistry[] = [];
afterAll(async () => {
  await Promise.all(registries.map((r) => r.close()));
});

function registryWith(kind: 'python' | 'typescript') {
  const dir = tempDir();
  const file = kind === 'python' ? 'nap.py' : 'nap.ts';
  writeFileSync(
    join(dir, file),
    kind === 'python'
      ? '"""\nTool: nap\nDescription: Sleeps, or dies, or echoes.\n\nInput:\n  seconds (float): How long.\n  die (bool, optional): Exit instead.\n  text (str, optional): Given back, in the result or in an error.\n  fail (bool, optional): Raise an error naming the text.\n"""\nimport os, time\n\ndef execute(args):\n    if args.get("die"):\n        os._exit(7)\n    if "text" in args:\n        if args.get("fail"):\n            raise ValueError(args["text"])\n        return {"text": args["text"], "key " + args["text"]: 1}\n    time.sleep(args["seconds"])\n    return "rested"\n'
      : '/**\n * Tool: nap\n * Description: Sleeps, or dies, or echoes.\n *\n * Input:\n *   seconds (float): How long.\n *   die (bool, optional): Exit instead.\n *   text (str, optional): Given back, in the result or in an error.\n *   fail (bool, optional): Throw an error naming the text.\n */\nexport async function execute(args: { seconds: number; die?: boolean; text?: string; fail?: boolean }) {\n  if (args.die) process.exit(7);\n  if (args.text !== undefined) {\n    if (args.fail) throw new Error(args.text);\n    return { text: args.text, [`key ${args.text}`]: 1 };\n  }\n  await new Promise((r) => setTimeout(r, args.seconds * 1000));\n  return "rested";\n}\n',
  );
  const { spec } = parseToolFile({ absolute: join(dir, file), relative: file, display: file, kind });
  const registry = new ToolRegistry({ workDir: dir, log: silentLogger });
  registry.register(createCustomTool(spec!, { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir) }), file);
  registries.push(registry);
  return registry;
}

describe.each(['python', 'typescript'] as const)('a %s worker', (kind) => {
  it('adds no listener per call: 40 calls on one worker, no MaxListenersExceededWarning (an unsandboxed agent printed one after a few calls)', async () => {
    const registry = registryWith(kind);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning.message));
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 40; i++) expect(await registry.execute('nap', { seconds: 0 })).toMatchObject({ ok: true, value: 'rested' });
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  }, 60_000);

  it('serves the next caller after a timed-out call (10 rounds, the next call queued behind it)', async () => {
    const registry = registryWith(kind);
    for (let round = 0; round < 10; round++) {
      const slow = registry.execute('nap', { seconds: 30 }, { timeoutMs: 100 + (round % 3) * 50 });
      const next = registry.execute('nap', { seconds: 0 });
      expect(await slow).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
      expect(await next, `round ${round}`).toMatchObject({ ok: true, value: 'rested' });
    }
  }, 120_000);

  it('serves the next caller after a cancelled call (10 rounds, the next call sent right after the cancel)', async () => {
    const registry = registryWith(kind);
    expect(await registry.execute('nap', { seconds: 0 })).toMatchObject({ ok: true });
    for (let round = 0; round < 10; round++) {
      const controller = new AbortController();
      const slow = registry.execute('nap', { seconds: 30 }, { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 50 + (round % 4) * 25));
      controller.abort();
      const next = registry.execute('nap', { seconds: 0 });
      expect(await slow).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED' } });
      expect(await next, `round ${round}`).toMatchObject({ ok: true, value: 'rested' });
    }
  }, 120_000);

  it('gives back text holding NUL, U+0001 and half a surrogate pair as it was, in a result (keys too) and in an error, and serves the next call', async () => {
    const registry = registryWith(kind);
    const text = 'nul \0, U+0001 \u0001, half a pair \ud800 and \udfff, a pair 😀, é';
    expect((await registry.execute('nap', { seconds: 0, text })) as unknown).toMatchObject({ ok: true, value: { text, [`key ${text}`]: 1 } });
    expect(await registry.execute('nap', { seconds: 0, text, fail: true })).toMatchObject({ ok: false, error: { message: expect.stringContaining(text) } });
    expect(await registry.execute('nap', { seconds: 0 })).toMatchObject({ ok: true, value: 'rested' });
  }, 60_000);

  it('settles only the call its dying worker was running', async () => {
    const registry = registryWith(kind);
    for (let round = 0; round < 5; round++) {
      const dies = registry.execute('nap', { seconds: 0, die: true });
      const next = registry.execute('nap', { seconds: 0 });
      expect(await dies).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CRASHED', message: expect.stringContaining('exited with code 7') } });
      expect(await next, `round ${round}`).toMatchObject({ ok: true, value: 'rested' });
    }
  }, 120_000);
});
