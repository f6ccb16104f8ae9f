/**
 * A fork bomb from every kind of tool process, against an agent that runs as
 * a user of its own (as the generated image runs it): each tool's sandbox
 * holds at most forge.yaml's `processes:`, counted per sandbox (two calls at
 * once each get their own), and the server stays healthy. The suite runs as
 * root, so the agent is started as `nobody`, with Debian's python3 (pyenv's
 * lives under /root, which nobody cannot read).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, tempDir, writeProject } from '../helpers/project.ts';
import { ATTACK_SCRIPT, NODE_WORKER_TOOL, pythonScriptTool, pythonWorkerTool, YAML_STEP_TOOL } from '../helpers/sandbox-attacks.ts';

const TOKEN = `tok-${process.pid}-${Date.now()}`;
const CAP = 48;
const KINDS = ['py_script', 'py_worker', 'node_worker', 'yaml_step', 'cli_execute', 'local_shell'] as const;
type Kind = (typeof KINDS)[number];

let agent: AgentProcess;

beforeAll(async () => {
  expect(process.getuid?.(), 'these tests start the agent as another user, which takes root (as the CI runs)').toBe(0);
  expect(existsSync('/usr/bin/python3'), "Debian's python3 (.ci/run installs it)").toBe(true);
  const project = writeProject({
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
  const { workDir, bundle } = deployBundle(project, 'forge-forker-');
  writeFileSync(join(workDir, 'attack.py'), ATTACK_SCRIPT);
  const nobody = { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })) };
  const cacheDir = tempDir('forge-forker-cache-');
  for (const dir of [workDir, cacheDir]) chownSync(dir, nobody.uid, nobody.gid);
  agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], {
    cwd: workDir,
    ...nobody,
    env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_PYTHON: '/usr/bin/python3', PATH: '/usr/bin:/bin', HOME: cacheDir, FORGE_CACHE_DIR: cacheDir, FORGE_STATE_DIR: join(cacheDir, 'state') },
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
});

/** Starts up to `limit` processes living `hold` seconds from one kind of tool process, over REST. */
async function forks(kind: Kind, limit: number, hold = 2): Promise<{ started: number; error: string | null }> {
  const json = JSON.stringify({ action: 'forks', limit, hold });
  const args = kind === 'yaml_step' ? { payload: json } : kind === 'cli_execute' ? { binary: 'python3', args: ['attack.py', json], timeout: 30 } : kind === 'local_shell' ? { command: `python3 attack.py '${json}'`, timeout: 60 } : { payload: { action: 'forks', limit, hold } };
  const res = await fetch(`${agent.url}/tools/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  const result = (await res.json()) as { ok: boolean; value?: any; error?: unknown };
  expect(result.ok, JSON.stringify(result.error)).toBe(true);
  const value = typeof result.value === 'string' ? JSON.parse(result.value) : result.value;
  if (kind === 'cli_execute' || kind === 'local_shell') {
    expect(value.exit_code, value.stderr).toBe(0);
    return JSON.parse(value.stdout);
  }
  return typeof value === 'string' ? JSON.parse(value) : value;
}

it('says at start how many processes a tool sandbox may hold', () => {
  expect(agent.output()).toContain(`at most ${CAP} processes per tool sandbox`);
});

describe.each(KINDS)('a %s process', (kind) => {
  it('that forks without end is stopped at the sandbox\'s process cap, and the server stays healthy', async () => {
    const seen = await forks(kind, 3 * CAP);
    expect(seen.started).toBeGreaterThan(0);
    expect(seen.started).toBeLessThan(CAP);
    expect(seen.error).toMatch(/Resource temporarily unavailable|EAGAIN/);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    // The next call starts processes again at once, though those would still be sleeping: a one-shot sandbox ends
    // with its call, and a worker's (whose cap lasts its life) is cleared of them, zombies reaped, after each call.
    expect((await forks(kind, 4, 0)).started).toBe(4);
  });
});

it('counts each sandbox\'s processes apart: two calls at once each start more than half the cap', async () => {
  const each = Math.floor(CAP * 0.6);
  const [first, second] = await Promise.all([forks('py_script', each, 3), forks('py_script', each, 3)]);
  expect(first).toEqual({ started: each, error: null });
  expect(second).toEqual({ started: each, error: null });
});
