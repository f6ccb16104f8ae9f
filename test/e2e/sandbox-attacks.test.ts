/**
 * The built bundle under attack from its own tool processes, as a
 * prompt-injected model or a token holder would drive them: every kind of
 * tool process (Python script, Python worker, Node worker, YAML step,
 * cli_execute, local_shell) tries to read the server's secrets through
 * /proc, the key and state files, to leave children behind, to eat memory
 * and to reach the network. Under the bubblewrap sandbox every attempt
 * fails and the server stays healthy.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, tempDir, writeProject } from '../helpers/project.ts';
import { ATTACK_SCRIPT, NODE_WORKER_TOOL, processesWithMarker, pythonScriptTool, pythonWorkerTool, YAML_STEP_TOOL } from '../helpers/sandbox-attacks.ts';
import { probeSandbox } from '../../runtime/exec/sandbox-probe.ts';

const TOKEN = `tok-${process.pid}-${Date.now()}`;
const LOADER_MARKER = `stray-at-load-${process.pid}-${Date.now()}`;

/** The same in TypeScript (a Node worker). */
const nodeLoaderTool = (marker: string) =>
  [
    '/**',
    ' * Tool: node_loader',
    ' * Description: Starts a child when its module loads.',
    ' * Tags: read',
    ' */',
    "import { spawn } from 'node:child_process';",
    `spawn('nohup', [process.execPath, '-e', 'setTimeout(() => {}, 600000)', '${marker}'], { detached: true, stdio: 'ignore' }).unref();`,
    'export function execute() {',
    '  return { loaded: true };',
    '}',
    '',
  ].join('\n');

/** A worker tool whose module starts a child as it loads, before any call. */
const pythonLoaderTool = (marker: string) =>
  [
    '"""',
    'Tool: py_loader',
    'Description: Starts a child when its module loads.',
    'Tags: read',
    '"""',
    'import subprocess, sys',
    `subprocess.Popen(["nohup", sys.executable, "-c", "import time; time.sleep(600)", "${marker}"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)`,
    '',
    'def execute(args):',
    '    return {"loaded": True}',
    '',
  ].join('\n');
const PLANTED = `planted-secret-${Math.random().toString(36).slice(2)}`;
const MODEL_KEY = `sk-model-${Math.random().toString(36).slice(2)}`;
const HOME_SECRET = `home-secret-${Math.random().toString(36).slice(2)}`;
/** Credential stores the agent's home holds, each with HOME_SECRET in it. */
const HOME_STORES = ['.ssh/id_ed25519', '.aws/credentials', '.netrc', '.docker/config.json', '.config/gh/hosts.yml', '.bash_history'];
/** Credential stores made while the agent runs, one for each kind of tool process (after its process started). */
const LATE_STORES = ['.pgpass', '.pypirc', '.git-credentials', '.vault-token', '.s3cfg', '.boto'];
/** The kinds of tool process that serve many calls; the others start a process per call, with the mounts of now. */
const WARM_KINDS: readonly string[] = ['py_worker', 'node_worker'];
/** What a warm process's command line holds: its Python file, or the Node worker's tool name after `__worker`. */
const warmMarker = (kind: string) => (kind === 'py_worker' ? join(bundle, 'tools', 'py_worker.py') : '\0__worker\0node_worker\0');
/** The kind's warm process (and its sandbox's), after a call that left it running; none for a kind that starts a process per call. */
function warmProcesses(kind: string): number[] {
  if (!WARM_KINDS.includes(kind)) return [];
  const pids = processesWithMarker(warmMarker(kind));
  expect(pids.length, `${kind}'s warm process, which the call before left running`).toBeGreaterThan(0);
  return pids;
}
/**
 * Waits for the look at the mounts (once a second) to stop the warm process `pids`, whose mounts are no longer
 * now's; the next call starts one under the mounts of now. A process per call has the mounts of now already.
 */
async function mountsLooked(kind: string, pids: number[]): Promise<void> {
  const left = () => processesWithMarker(warmMarker(kind)).filter((pid) => pids.includes(pid));
  await waitUntil(() => !left().length, 20_000, () => `${kind}'s warm process was not stopped: ${survivors(warmMarker(kind))}`);
}

let bundle: string;
let workDir: string;
let secretsDir: string;
/** The agent's home: credentials where people keep them, and a file that is not one. */
let home: string;
let agent: AgentProcess;
let loopback: Server;
let loopbackPort: number;
/** Listening Unix sockets where host daemons keep theirs: /run itself and a per-user dir under it. */
let hostSockets: string[];
const socketServers: Server[] = [];

const KINDS = ['py_script', 'py_worker', 'node_worker', 'yaml_step', 'cli_execute', 'local_shell'] as const;
type Kind = (typeof KINDS)[number];

beforeAll(async () => {
  const probe = await probeSandbox();
  expect(probe.isolation, `this machine must run bubblewrap (${probe.reason})`).toBe('bubblewrap');
  const project = writeProject({
    'forge.yaml': [
      'agent_id: hostile',
      'version: 1.0.0',
      'description: Tools that attack their host.',
      'model: { provider: openai, name: none, base_url: "http://127.0.0.1:9/v1" }',
      'tools:',
      '  - name: cli_execute',
      '    config: { allowed_binaries: [python3] }',
      '  - local_shell',
      '  - grep_search',
      'sandbox:',
      '  memory: 256MB',
      '  network: false',
      '  tools:',
      '    net_allowed: { network: true }',
      '',
    ].join('\n'),
    'tools/py_script.py': pythonScriptTool('py_script'),
    'tools/py_worker.py': pythonWorkerTool('py_worker'),
    'tools/net_allowed.py': pythonWorkerTool('net_allowed'),
    'tools/node_worker.ts': NODE_WORKER_TOOL,
    'tools/py_loader.py': pythonLoaderTool(LOADER_MARKER),
    'tools/node_loader.ts': nodeLoaderTool(`${LOADER_MARKER}-node`),
    'tools/yaml_step.yaml': YAML_STEP_TOOL,
  });
  const built = await forge(['build'], project);
  expect(built.code, built.stderr).toBe(0);
  ({ workDir, bundle } = deployBundle(project, 'forge-hostile-'));
  writeFileSync(join(workDir, 'attack.py'), ATTACK_SCRIPT);
  // A repository, as the work dir of an agent that works on code is; git init makes its hooks dir.
  execFileSync('git', ['init', '--quiet', workDir]);
  rmSync(join(workDir, '.git', 'hooks'), { recursive: true, force: true });
  mkdirSync(join(workDir, '.forge'), { recursive: true });
  writeFileSync(join(workDir, '.forge', 'state-secret'), PLANTED);
  writeFileSync(join(workDir, 'visible.txt'), `findme ${PLANTED.slice(0, 8)}\n`);
  secretsDir = tempDir('forge-secrets-');
  // Outside /tmp, which every sandbox replaces with its own.
  home = tempDir('forge-home-', '/var/tmp');
  for (const store of HOME_STORES) {
    mkdirSync(join(home, store, '..'), { recursive: true });
    writeFileSync(join(home, store), `${HOME_SECRET}\n`, { mode: 0o600 });
  }
  writeFileSync(join(home, 'notes.txt'), 'not a secret\n');
  writeFileSync(join(secretsDir, 'model.key'), MODEL_KEY, { mode: 0o600 });

  // A tool that connects and exits at once resets the connection: that is its business, not an error here.
  loopback = createServer((socket) => {
    socket.on('error', () => {});
    socket.end('hello\n');
  });
  await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
  loopbackPort = (loopback.address() as { port: number }).port;
  // The suite runs as root here (like the CI): /run is writable, as it is to the daemons that listen there.
  expect(process.getuid?.(), 'the sandbox attacks run as root, like the CI: root is the case the sandbox must hold').toBe(0);
  const runDir = tempDir('forge-attack-', '/run');
  mkdirSync(join(runDir, 'user', '1000'), { recursive: true });
  hostSockets = [join(runDir, 'docker.sock'), join(runDir, 'user', '1000', 'bus')];
  for (const path of hostSockets) {
    const server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    socketServers.push(server);
  }

  agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], {
    cwd: workDir,
    env: { FORGE_AUTH_TOKEN: TOKEN, PLANTED_SECRET: PLANTED, OPENAI_API_KEY_FILE: join(secretsDir, 'model.key'), FORGE_STATE_DIR: join(secretsDir, 'state'), HOME: home },
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  loopback?.close();
  await Promise.all(socketServers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** One attack through one kind of tool process, over REST as a token holder. Returns what the attack saw, or the error. */
async function attack(kind: Kind | 'net_allowed', payload: Record<string, unknown>): Promise<Record<string, any>> {
  const json = JSON.stringify(payload);
  const args =
    kind === 'yaml_step' ? { payload: json } : kind === 'cli_execute' ? { binary: 'python3', args: ['attack.py', json], timeout: 30 } : kind === 'local_shell' ? { command: `python3 attack.py '${json}'`, timeout: 60 } : { payload };
  const res = await fetch(`${agent.url}/tools/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  const result = (await res.json()) as { ok: boolean; value?: any; error?: { code: string; message: string } };
  if (!result.ok) return { error: result.error };
  // A script tool's or a YAML step's stdout is its text result (exact output): the attack printed JSON.
  const value = typeof result.value === 'string' ? JSON.parse(result.value) : result.value;
  if (kind === 'cli_execute' || kind === 'local_shell') {
    if (value.exit_code !== 0) return { error: { code: 'EXIT', message: `${value.exit_code} ${value.signal ?? ''} ${value.stderr}` } };
    return JSON.parse(value.stdout);
  }
  // A script tool without an Output: section returns its printed text exactly (the attack prints JSON).
  return typeof value === 'string' ? JSON.parse(value) : value;
}

it('says at start that, run as root, its tool sandboxes get no process cap, and why (the kernel exempts root)', () => {
  expect(agent.output()).toMatch(/no process cap: the agent runs as root/);
});

describe.each(KINDS)('a %s process', (kind) => {
  it('finds nothing of the server in /proc: not its environment, not any process environment', async () => {
    const seen = await attack(kind, { action: 'environ', needles: [TOKEN, PLANTED], pid: agent.child.pid });
    expect(seen.error).toBeUndefined();
    expect(seen.hits).toEqual([]);
    expect(seen.direct).toBe(false);
    // Its /proc is its own PID namespace: a handful of processes, not the host's.
    expect(seen.pids).toBeLessThan(10);
  });

  it('cannot read the model key file, the state dir or the generated-token dir', async () => {
    const paths = [join(secretsDir, 'model.key'), join(workDir, '.forge'), join(workDir, '.forge', 'state-secret'), join(secretsDir, 'state')];
    const seen = await attack(kind, { action: 'read', paths });
    expect(seen.error).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain(MODEL_KEY);
    expect(JSON.stringify(seen)).not.toContain(PLANTED);
    expect(seen[join(workDir, '.forge')]).toEqual({ listing: [] });
  });

  it('leaves no child behind when the call returns (double fork, setsid, nohup)', async () => {
    const marker = `stray-${kind}-${Date.now()}`;
    const seen = await attack(kind, { action: 'stray', marker });
    expect(seen).toEqual({ started: true });
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('is stopped by its memory cap, as an error result, and the server stays healthy', async () => {
    const seen = await attack(kind, { action: 'bomb' });
    expect(seen.survived).toBeUndefined();
    expect(seen.error).toBeDefined();
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
    // And the same tool serves the next call.
    expect(await attack(kind, { action: 'read', paths: [] })).toEqual({});
  });

  it('has none of root\'s capabilities but its file ones, even when the server runs as root: it can neither unmount a hidden dir nor remount / writable', async () => {
    // Outside /tmp, which the sandbox replaces with its own: a write here would land on the host.
    const outside = join('/var/tmp', `forge-escaped-${kind}-${process.pid}-${Date.now()}`);
    try {
      const seen = await attack(kind, { action: 'privileged', hidden: join(workDir, '.forge'), secret: join(workDir, '.forge', 'state-secret'), outside });
      // Root keeps only what lets it write files it does not own (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER).
      expect(seen).toEqual({ caps: '000000000000000b', unmounted: false, remounted: false, wrote: false, secret: null });
      expect(existsSync(outside)).toBe(false);
    } finally {
      rmSync(outside, { force: true });
    }
  });

  it('cannot read the credentials in the agent\'s home (SSH keys, cloud logins, tokens, histories); the rest of home stays readable', async () => {
    const stores = HOME_STORES.map((p) => join(home, p));
    const seen = await attack(kind, { action: 'read', paths: [...stores, join(home, '.ssh'), join(home, 'notes.txt')] });
    expect(JSON.stringify(seen)).not.toContain(HOME_SECRET);
    // A file has /dev/null over it (refused on the read-only mount); one inside a hidden dir is not there.
    for (const store of stores) expect(seen[store]).toEqual({ error: expect.stringMatching(/^(No such file or directory|ENOENT|Permission denied|EACCES)$/) });
    expect(seen[join(home, '.ssh')]).toEqual({ listing: [] });
    expect(seen[join(home, 'notes.txt')]).toEqual({ content: 'not a secret\n' });
  });

  it('cannot read a credential store made after its process started (an `aws configure` in another terminal while the agent runs)', async () => {
    const store = join(home, LATE_STORES[KINDS.indexOf(kind)]);
    // From here on a worker kind has its warm process.
    expect(await attack(kind, { action: 'read', paths: [join(home, 'notes.txt')] })).toEqual({ [join(home, 'notes.txt')]: { content: 'not a secret\n' } });
    const warm = warmProcesses(kind);
    writeFileSync(store, `${HOME_SECRET}\n`, { mode: 0o600 });
    await mountsLooked(kind, warm);
    const seen = await attack(kind, { action: 'read', paths: [store] });
    expect(JSON.stringify(seen)).not.toContain(HOME_SECRET);
    expect(seen[store]).toEqual({ error: expect.stringMatching(/^(No such file or directory|ENOENT|Permission denied|EACCES)$/) });
  });

  it('cannot read a credential store replaced after its process started (git credential, docker login and shells write by rename)', async () => {
    const store = join(home, '.netrc');
    expect(await attack(kind, { action: 'read', paths: [join(home, 'notes.txt')] })).toEqual({ [join(home, 'notes.txt')]: { content: 'not a secret\n' } });
    const warm = warmProcesses(kind);
    // The rename takes the stand-in mounted over the old file away, in every sandbox that has one. Twice: a
    // file system may give the second file the first one's freed inode number.
    for (const round of [1, 2]) {
      writeFileSync(`${store}.new`, `${HOME_SECRET} replaced ${round}\n`, { mode: 0o600 });
      renameSync(`${store}.new`, store);
    }
    await mountsLooked(kind, warm);
    const seen = await attack(kind, { action: 'read', paths: [store] });
    expect(JSON.stringify(seen)).not.toContain(HOME_SECRET);
  });

  it('cannot plant what the host\'s git runs in the work dir\'s repository (its config, a hook); the work dir stays writable', async () => {
    const config = join(workDir, '.git', 'config');
    const hook = join(workDir, '.git', 'hooks', `post-checkout-${kind}`);
    const control = join(workDir, `written-by-${kind}.txt`);
    const configBefore = readFileSync(config, 'utf8');
    const seen = await attack(kind, { action: 'write', paths: [config, hook, control] });
    expect(seen[config]).toMatch(/^(Read-only file system|EROFS)$/);
    expect(seen[hook]).toMatch(/^(Read-only file system|EROFS)$/);
    expect(seen[control]).toBe('written');
    expect(readFileSync(config, 'utf8')).toBe(configBefore);
    expect(existsSync(hook)).toBe(false);
  });

  it('cannot write the repository\'s config after the host\'s own git rewrote it (git writes it through config.lock and a rename)', async () => {
    const config = join(workDir, '.git', 'config');
    expect(await attack(kind, { action: 'read', paths: [join(home, 'notes.txt')] })).toEqual({ [join(home, 'notes.txt')]: { content: 'not a secret\n' } });
    const warm = warmProcesses(kind);
    execFileSync('git', ['-C', workDir, 'config', '--local', 'forge.rewrittenFor', kind]);
    const configBefore = readFileSync(config, 'utf8');
    await mountsLooked(kind, warm);
    const seen = await attack(kind, { action: 'write', paths: [config] });
    expect(seen[config]).toMatch(/^(Read-only file system|EROFS)$/);
    expect(readFileSync(config, 'utf8')).toBe(configBefore);
  });

  it('cannot reach the host daemons\' Unix sockets under /run (docker.sock, the D-Bus buses), with or without network', async () => {
    for (const tool of [kind, ...(kind === 'py_worker' ? (['net_allowed'] as const) : [])]) {
      const seen = await attack(tool, { action: 'unix', paths: hostSockets });
      expect(Object.keys(seen).sort()).toEqual([...hostSockets].sort());
      for (const outcome of Object.values(seen)) expect(outcome).toMatch(/^(No such file or directory|ENOENT)$/);
    }
  });

  it('cannot write the host kernel\'s settings through /proc/sys, even as root (core_pattern would run a program as the host\'s root)', async () => {
    // The attack writes each file's own value back: were /proc writable, nothing would change but the answer.
    const seen = await attack(kind, { action: 'sysctl' });
    expect(Object.keys(seen).sort()).toEqual(['/proc/sys/kernel/core_pattern', '/proc/sys/vm/swappiness']);
    for (const outcome of Object.values(seen)) expect(outcome).toMatch(/^(Read-only file system|EROFS)$/);
  });

  it('with network: false cannot connect to a loopback server', async () => {
    const seen = await attack(kind, { action: 'connect', port: loopbackPort });
    expect(seen).toMatchObject({ connected: false });
  });
});

describe.each([
  ['Python', 'py_loader', 'py_worker', LOADER_MARKER],
  ['Node', 'node_loader', 'node_worker', `${LOADER_MARKER}-node`],
] as const)('a %s worker\'s sweep', (_, loader, worker, marker) => {
  it('also takes what the tool\'s module started as it loaded, before its first call', async () => {
    const res = await fetch(`${agent.url}/tools/${loader}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
    expect(await res.json()).toMatchObject({ ok: true, value: { loaded: true } });
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('leaves no child behind on a call after one that started none', async () => {
    expect(await attack(worker, { action: 'read', paths: [] })).toEqual({});
    const stray = `stray-after-quiet-${worker}-${Date.now()}`;
    expect(await attack(worker, { action: 'stray', marker: stray })).toEqual({ started: true });
    expect(processesWithMarker(stray)).toEqual([]);
  });
});

describe('a warm worker whose sandbox would now hide more', () => {
  it('is stopped within a few seconds while idle, with no call to come (what it runs in threads of its own could read the store)', async () => {
    const file = join(bundle, 'tools', 'py_worker.py');
    const restartsForMounts = async () => {
      const metrics = await (await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      return Number(/^forge_worker_restarts_total\{reason="mounts"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    };
    expect(await attack('py_worker', { action: 'read', paths: [join(home, 'notes.txt')] })).toEqual({ [join(home, 'notes.txt')]: { content: 'not a secret\n' } });
    const before = await restartsForMounts();
    expect(processesWithMarker(file).length).toBeGreaterThan(0);
    writeFileSync(join(home, '.my.cnf'), `[client]\npassword=${HOME_SECRET}\n`, { mode: 0o600 });
    const deadline = Date.now() + 5000;
    while (processesWithMarker(file).length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(processesWithMarker(file)).toEqual([]);
    // The next call starts one under the mounts of now, and the restart is counted as the mounts' doing.
    const seen = await attack('py_worker', { action: 'read', paths: [join(home, '.my.cnf')] });
    expect(JSON.stringify(seen)).not.toContain(HOME_SECRET);
    expect(await restartsForMounts()).toBe(before + 1);
  });
});

describe('the sandbox as a whole', () => {
  it('runs grep_search\'s ripgrep inside it: the work dir is searched, the hidden state dir is not there', async () => {
    const post = (args: unknown) =>
      fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(args) }).then((r) => r.json() as Promise<any>);
    const found = await post({ pattern: PLANTED.slice(0, 8), include_hidden: true });
    expect(found).toMatchObject({ ok: true, value: { engine: 'ripgrep' } });
    expect(found.value.matches.map((m: { path: string }) => m.path)).toEqual(['visible.txt']);
  });

  it('lets a tool with network: true reach the same loopback server (the control)', async () => {
    expect(await attack('net_allowed', { action: 'connect', port: loopbackPort })).toEqual({ connected: true });
  });

  it('reports its isolation level in /readyz', async () => {
    const ready = await fetch(`${agent.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, sandbox: { isolation: 'bubblewrap', mode: 'auto', memory_caps: true, default_memory_bytes: 256 * 1024 * 1024 } });
  });
});

/**
 * A work dir of its own, with the attack script, for a server started beside the suite's: one work dir's
 * `file:` store serves one server (a second is refused, FORGE_STATE_IN_USE).
 */
function ownWorkDir(): string {
  const dir = tempDir('forge-hostile-own-');
  writeFileSync(join(dir, 'attack.py'), ATTACK_SCRIPT);
  return dir;
}

describe('at server shutdown', () => {
  it.each([
    ['py_worker', 'SIGKILL'],
    ['node_worker', 'SIGKILL'],
    ['py_script', 'SIGTERM'],
    ['local_shell', 'SIGKILL'],
  ] as const)('kills the children of a %s call in flight when the server gets %s', async (kind, signal) => {
    // A short grace period: the call lingers 60 s, so SIGTERM's path ends with the grace running out and the turn's processes killed.
    const server = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: ownWorkDir(), env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_SHUTDOWN_GRACE: '1s' } });
    const marker = `shutdown-${kind}-${Date.now()}`;
    const json = JSON.stringify({ action: 'stray', marker, linger: 60 });
    const args = kind === 'local_shell' ? { command: `python3 attack.py '${json}'`, timeout: 120 } : { payload: { action: 'stray', marker, linger: 60 } };
    const call = fetch(`${server.url}/tools/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(args) }).catch(() => undefined);
    // Its two strays (`<marker>-setsid`, `-nohup`…) mean the command runs. The marker alone would also match
    // bwrap while it sets the sandbox up, before it asks for its parent-death signal: a server killed then
    // leaves the sandbox running (bwrap's own race, in the README).
    await waitUntil(() => processesWithMarker(`${marker}-`).length >= 2, 30_000);
    await server.stop(signal);
    await call;
    await waitUntil(() => processesWithMarker(marker).length === 0, 15_000, () => survivors(marker));
  });
});

describe('a generated token', () => {
  it('lives outside the work dir, and no tool process can read it', async () => {
    const stateDir = join(tempDir('forge-state-'), 'forge');
    const ownDir = ownWorkDir();
    const server = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: ownDir, env: { FORGE_STATE_DIR: stateDir } });
    try {
      await server.waitFor(/auth token \(saved in (\S+), outside the work dir; shown once\): (\S+)/);
      const [, file, token] = /auth token \(saved in (\S+), outside the work dir; shown once\): (\S+)/.exec(server.output())!;
      expect(file.startsWith(stateDir)).toBe(true);
      const res = await fetch(`${server.url}/tools/py_worker`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ payload: { action: 'read', paths: [file, stateDir] } }) });
      const result = (await res.json()) as { ok: boolean; value: Record<string, unknown> };
      expect(result.ok).toBe(true);
      expect(JSON.stringify(result.value)).not.toContain(token);
      // Hidden under an empty tmpfs, or not there at all (under /tmp, which every sandbox replaces).
      expect([{ listing: [] }, { error: 'No such file or directory' }]).toContainEqual(result.value[stateDir]);
      // Every later start names the file, never the token: a person who missed the first start finds it there.
      await server.stop('SIGTERM');
      const again = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: ownDir, env: { FORGE_STATE_DIR: stateDir } });
      try {
        await again.waitFor(`auth token: in ${file}\n`);
        expect(again.output()).not.toContain(token);
      } finally {
        await again.stop('SIGKILL');
      }
    } finally {
      await server.stop('SIGKILL');
    }
  });
});

async function waitUntil(condition: () => boolean, ms: number, explain: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met in time${explain() ? `: ${explain()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The processes still carrying the marker: pid, parent, state and command line, to say what escaped. */
function survivors(marker: string): string {
  return processesWithMarker(marker)
    .map((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '?';
        return `pid ${pid} ppid ${field('PPid')} state ${field('State')} nspid ${field('NSpid')}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 160)}`;
      } catch {
        return `pid ${pid} (gone)`;
      }
    })
    .join('; ');
}
