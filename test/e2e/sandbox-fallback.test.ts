/**
 * Where the platform refuses namespaces (some container runtimes), the
 * bundle says so: one clear warning and isolation "none" in /readyz and
 * `doctor`, while the memory caps (prlimit, no namespaces needed) still
 * hold; with `sandbox: required` it refuses to start instead.
 * FORGE_BWRAP points at a bwrap that fails the way a refusing runtime does.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, runProcess, tempDir, writeProject } from '../helpers/project.ts';
import { pythonWorkerTool } from '../helpers/sandbox-attacks.ts';

let bundle: string;
let workDir: string;
let refusingBwrap: string;
const TOKEN = 'fallback-token';

beforeAll(async () => {
  const project = writeProject({
    'forge.yaml': 'agent_id: fallback\nversion: 1.0.0\ndescription: x\nsandbox:\n  mode: required\n  memory: 256MB\n',
    'tools/py_worker.py': pythonWorkerTool('py_worker'),
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  ({ workDir, bundle } = deployBundle(project));
  refusingBwrap = join(tempDir(), 'bwrap');
  writeFileSync(refusingBwrap, '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n');
  chmodSync(refusingBwrap, 0o755);
}, 120_000);

const runtime = (args: string[], env: NodeJS.ProcessEnv = {}) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: workDir, env: { FORGE_AUTH_TOKEN: TOKEN, ...env } });

describe('sandbox: required', () => {
  it('records the mode and the memory cap in agent.json', async () => {
    const { stdout } = await runProcess('cat', [join(bundle, 'agent.json')], { cwd: workDir });
    expect(JSON.parse(stdout)).toMatchObject({ sandbox: { mode: 'required', memory_bytes: 256 * 1024 * 1024 }, workdir: '.' });
  });

  it.each([['serve', '--port', '0'], ['call', 'py_worker', '{"payload":{"action":"read","paths":[]}}'], ['--stdio']])('refuses to start %s where namespaces are refused', async (...args) => {
    const { code, stderr } = await runtime(args, { FORGE_BWRAP: refusingBwrap });
    expect(code).toBe(1);
    expect(stderr).toContain('forge.yaml says sandbox: required, but bubblewrap cannot create namespaces here: bwrap: No permissions to create new namespace');
    expect(stderr).toContain('hint: install bubblewrap');
  });

  it('runs tools sandboxed where bubblewrap works', async () => {
    const { code, stdout, stderr } = await runtime(['call', 'py_worker', '{"payload":{"action":"environ","needles":["fallback-token"],"pid":1}}']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ hits: [], direct: false });
  });

  it('doctor says what is missing and fails', async () => {
    const refused = await runtime(['doctor'], { FORGE_BWRAP: refusingBwrap, FORGE_STATE_DIR: tempDir() });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/FAIL {2}isolation {2}none: bubblewrap cannot create namespaces here: .*serve will refuse to start/);
    const fine = await runtime(['doctor', '--json'], { FORGE_STATE_DIR: tempDir() });
    expect(fine.code).toBe(0);
    expect(JSON.parse(fine.stdout)).toMatchObject({ ok: true, checks: expect.arrayContaining([expect.objectContaining({ name: 'isolation', ok: true, detail: expect.stringContaining('bubblewrap at ') })]) });
  });
});

describe('sandbox: auto where namespaces are refused', () => {
  it('starts with one clear warning, reports isolation none, and still caps memory', async () => {
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], {
      cwd: workDir,
      env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_BWRAP: refusingBwrap, FORGE_SANDBOX: 'auto' },
    });
    try {
      const warnings = agent.output().match(/tool processes run WITHOUT a sandbox/g) ?? [];
      expect(warnings).toHaveLength(1);
      expect(agent.output()).toContain('tool isolation: none (bubblewrap cannot create namespaces here');
      const ready = await fetch(`${agent.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, sandbox: { isolation: 'none', mode: 'auto', reason: expect.stringContaining('No permissions'), memory_caps: true } });
      const call = (payload: unknown) =>
        fetch(`${agent.url}/tools/py_worker`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ payload }) }).then((r) => r.json() as Promise<{ ok: boolean; value?: any; error?: any }>);
      expect(await call({ action: 'read', paths: [] })).toMatchObject({ ok: true, value: {} });
      const bomb = await call({ action: 'bomb' });
      expect(bomb).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: expect.stringContaining('MemoryError') } });
      expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    } finally {
      await agent.stop('SIGKILL');
    }
  });
});
