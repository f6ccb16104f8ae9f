/**
 * A fork bomb from every kind of tool process, against an agent that runs as
 * a user of its own (as the generated image runs it): each tool's sandbox
 * holds at most forge.yaml's `processes:`, counted per sandbox (two calls at
 * once each get their own), and the server stays healthy. Where the cap
 * cannot be what forge.yaml asks — the agent's own hard limit is lower, or
 * bwrap gives a sandbox no user namespace to count in — the agent says so at
 * start and its tools still run. The suite runs as root, so the agent is
 * started as `nobody`, with Debian's python3 (pyenv's lives under /root,
 * which nobody cannot read).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { nobody as nobodyUser, serveAs, type OtherUser } from '../helpers/other-user.ts';
import { waitUntil } from '../helpers/fleet.ts';
import { forge, tempDir, writeProject } from '../helpers/project.ts';
import { ATTACK_SCRIPT, NODE_WORKER_TOOL, pythonScriptTool, pythonWorkerTool, YAML_STEP_TOOL } from '../helpers/sandbox-attacks.ts';

const TOKEN = `tok-${process.pid}-${Date.now()}`;
const CAP = 48;
const KINDS = ['py_script', 'py_worker', 'node_worker', 'yaml_step', 'cli_execute', 'local_shell'] as const;
type Kind = (typeof KINDS)[number];

let project: string;
let nobody: OtherUser;
let agent: AgentProcess;

/** The bundle served by nobody, `wrapper` (prlimit …) before node. */
async function startAsNobody(env: NodeJS.ProcessEnv = {}, wrapper: string[] = []): Promise<AgentProcess> {
  const served = await serveAs(nobody, project, { env: { FORGE_AUTH_TOKEN: TOKEN, ...env }, wrapper, prepare: (workDir) => writeFileSync(join(workDir, 'attack.py'), ATTACK_SCRIPT) });
  return served.agent;
}

beforeAll(async () => {
  nobody = nobodyUser();
  project = writeProject({
    'forge.yaml': [
      'agent_id: forker',
      'version: 1.0.0',
      'description: Tools that fork without end.',
      'tools:',
      '  - name: cli_execute',
      '    config: { allowed_binaries: [python3] }',
      '  - local_shell',
      'sandbox:',
      '  memory: 256MB',
      `  processes: ${CAP}`,
      '',
    ].join('\n'),
    'tools/py_script.py': pythonScriptTool('py_script'),
    'tools/py_worker.py': pythonWorkerTool('py_worker'),
    'tools/node_worker.ts': NODE_WORKER_TOOL,
    'tools/yaml_step.yaml': YAML_STEP_TOOL,
  });
  const built = await forge(['build'], project);
  expect(built.code, built.stderr).toBe(0);
  agent = await startAsNobody();
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
});

/** Runs the `forks` attack from one kind of tool process, over REST. */
async function forks(server: AgentProcess, kind: Kind, payload: { limit: number; hold: number; barrier?: string; peers?: number }): Promise<{ started: number; error: string | null; overlapped?: boolean }> {
  const json = JSON.stringify({ action: 'forks', ...payload });
  const args = kind === 'yaml_step' ? { payload: json } : kind === 'cli_execute' ? { binary: 'python3', args: ['attack.py', json], timeout: 30 } : kind === 'local_shell' ? { command: `python3 attack.py '${json}'`, timeout: 60 } : { payload: { action: 'forks', ...payload } };
  const res = await fetch(`${server.url}/tools/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  const result = (await res.json()) as { ok: boolean; value?: any; error?: unknown };
  expect(result.ok, JSON.stringify(result.error)).toBe(true);
  const value = typeof result.value === 'string' ? JSON.parse(result.value) : result.value;
  if (kind === 'cli_execute' || kind === 'local_shell') {
    expect(value.exit_code, value.stderr).toBe(0);
    return JSON.parse(value.stdout);
  }
  return typeof value === 'string' ? JSON.parse(value) : value;
}

it('says at start and in /readyz how many processes a tool sandbox may hold', async () => {
  expect(agent.output()).toContain(`at most ${CAP} processes per tool sandbox`);
  const ready = (await (await fetch(`${agent.url}/readyz`)).json()) as { sandbox: Record<string, unknown> };
  expect(ready.sandbox).toMatchObject({ isolation: 'bubblewrap', default_processes: CAP });
  expect(ready.sandbox.process_cap_problem).toBeUndefined();
});

describe.each(KINDS)('a %s process', (kind) => {
  it('that forks without end is stopped at the sandbox\'s process cap, and the server stays healthy', async () => {
    const seen = await forks(agent, kind, { limit: 3 * CAP, hold: 2 });
    expect(seen.started).toBeGreaterThan(0);
    expect(seen.started).toBeLessThan(CAP);
    expect(seen.error).toMatch(/Resource temporarily unavailable|EAGAIN/);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    // The next call starts processes again at once, though those would still be sleeping: a one-shot sandbox ends
    // with its call, and a worker's (whose cap lasts its life) is cleared of them, zombies reaped, after each call.
    expect((await forks(agent, kind, { limit: 4, hold: 0 })).started).toBe(4);
  });
});

it('counts each sandbox\'s processes apart: two calls at once, their children alive together, each start more than half the cap', async () => {
  const each = Math.floor(CAP * 0.6);
  const barrier = `together-${Date.now()}`;
  const both = await Promise.all([0, 1].map(() => forks(agent, 'py_script', { limit: each, hold: 12, barrier, peers: 2 })));
  expect(both).toEqual([0, 1].map(() => ({ started: each, error: null, overlapped: true })));
});

it('keeps the cap at the agent\'s own hard limit when forge.yaml asks for more, says so, and its tools still run', async () => {
  // The agent's own limit counts every process of its user on the machine: the other agent's go first.
  await agent.stop('SIGKILL');
  await waitUntil(() => (spawnSync('pgrep', ['-u', String(nobody.uid)]).status === 1 ? true : undefined), 15_000, "nobody's processes to end");
  const hard = 40;
  const limited = await startAsNobody({}, ['/usr/bin/prlimit', `--nproc=${hard}:${hard}`, '--']);
  try {
    expect(limited.output()).toContain(`at most ${hard} processes per tool sandbox by default (the agent's own hard limit`);
    expect(((await (await fetch(`${limited.url}/readyz`)).json()) as { sandbox: unknown }).sandbox).toMatchObject({ default_processes: hard, process_hard_limit: hard });
    const seen = await forks(limited, 'py_script', { limit: 3 * CAP, hold: 2 });
    expect(seen.started).toBeGreaterThan(0);
    expect(seen.started).toBeLessThan(hard);
    expect((await forks(limited, 'py_worker', { limit: 4, hold: 0 })).started).toBe(4);
  } finally {
    await limited.stop('SIGKILL');
  }
});

it('sets no cap where bwrap gives a sandbox no user namespace of its own (a set-user-ID bwrap behind a wrapper script), says why, and its tools run', async () => {
  // Outside /tmp, which a sandbox replaces; and on a file system that honours set-user-ID.
  const dir = tempDir('forge-setuid-bwrap-', '/var/tmp');
  chmodSync(dir, 0o755);
  const bwrap = join(dir, 'bwrap');
  copyFileSync('/usr/bin/bwrap', bwrap);
  chmodSync(bwrap, 0o4755);
  // A wrapper (as some distributions and Nix install it): only running it shows there is no user namespace.
  const wrapper = join(dir, 'bwrap-wrapper');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${bwrap} "$@"\n`, { mode: 0o755 });
  const setuid = await startAsNobody({ FORGE_BWRAP: wrapper });
  try {
    expect(setuid.output()).toMatch(/tool isolation: bubblewrap .*no process cap: bwrap gives a sandbox no user namespace of its own/);
    expect(((await (await fetch(`${setuid.url}/readyz`)).json()) as { sandbox: unknown }).sandbox).toMatchObject({ process_cap_problem: expect.stringContaining('no user namespace of its own') });
    expect((await forks(setuid, 'py_script', { limit: 4, hold: 0 })).started).toBe(4);
  } finally {
    await setuid.stop('SIGKILL');
  }
});
