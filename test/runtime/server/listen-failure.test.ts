/** A server that cannot listen (a port in use): a FORGE_LISTEN diagnostic with a hint, no stack, and the process exits. */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { deployBundle, forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';

const greet = '"""\nTool: greet\nDescription: Greet someone.\nTags: read\n\nInput:\n  name (str): Who.\n"""\n\ndef execute(args):\n    return "hi " + args["name"]\n';

let busy: Server;
let port: number;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
  port = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

describe('a port in use', () => {
  it('forge run --dev names it with FORGE_LISTEN and a free-port hint, and exits instead of hanging', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    const started = Date.now();
    const result = await runProcess(process.execPath, [forgeBin, 'run', '--dev', '--no-auth', '--port', String(port)], { cwd: project });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`✘ FORGE_LISTEN cannot listen on 127.0.0.1:${port}: another process is listening there\n  hint: stop that process, or choose another port: --port ${port + 1}\n`);
    expect(result.stderr).not.toContain('EADDRINUSE');
    expect(result.stderr).not.toContain('stack trace');
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it('keeps no token generated for a start that failed: the next start shows the one it makes', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    const env = { FORGE_STATE_DIR: tempDir('forge-state-') };
    const failed = await runProcess(process.execPath, [forgeBin, 'run', '--port', String(port)], { cwd: project, env });
    expect(failed.code).toBe(1);
    expect(readdirSync(env.FORGE_STATE_DIR).filter((f) => f.startsWith('token-'))).toEqual([]);
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0'], { cwd: project, env });
    try {
      await agent.waitFor(/auth token \(saved in .*; shown once\): \S+/);
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it("the bundle's serve says the same, with its code and hint", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    expect((await forge(['build'], project)).code).toBe(0);
    const { bundle } = deployBundle(project);
    const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--no-auth', '--port', String(port)], { cwd: bundle });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: FORGE_LISTEN cannot listen on 127.0.0.1:${port}: another process is listening there\nhint: stop that process, or choose another port: --port ${port + 1}\n`);
    expect(result.stderr).not.toContain('EADDRINUSE');
  }, 60_000);
});
