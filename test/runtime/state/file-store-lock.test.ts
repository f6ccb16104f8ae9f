/**
 * Two servers on one file: state dir. The second refuses to start while the
 * first runs, and never trips over a lock its holder cannot renew any more
 * (a crash here, a container gone, a reload of its own process).
 */
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE, lockFileStore, machineId, type LockHolder } from '../../../runtime/state/file-store-lock.ts';
import { startAgentProcess, type AgentProcess } from '../../helpers/agent-process.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { forge, forgeBin, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';

const greet = '"""\nTool: greet\nDescription: Greets.\n"""\n\ndef execute(args):\n    return "hi"\n';

function agentProject(): string {
  return writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
}

function serve(project: string, env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  return startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth'], { cwd: project, env });
}

/** A second `forge run` on the project, expected to end: its exit code and output. */
async function serveAgain(project: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await forge(['run', '--port', '0', '--no-auth'], project, env);
  return { code, output: stdout + stderr };
}

function holder(project: string): LockHolder {
  return JSON.parse(readFileSync(join(project, '.forge', LOCK_FILE), 'utf8')) as LockHolder;
}

/** A lock as another process left it, renewed `ago` ms before now. */
function plantLock(project: string, fields: Partial<LockHolder>, ago: number): string {
  const file = join(project, '.forge', LOCK_FILE);
  const lock: LockHolder = { pid: 1, host: hostname(), machine: machineId(), since: '2026-01-01T00:00:00.000Z', token: 'planted', ...fields };
  mkdirSync(join(project, '.forge'), { recursive: true });
  writeFileSync(file, JSON.stringify(lock));
  const at = new Date(Date.now() - ago);
  utimesSync(file, at, at);
  return file;
}

async function healthy(url: string): Promise<boolean> {
  return (await fetch(`${url}/healthz`)).ok;
}

describe('two forge run on one .forge/', () => {
  it('refuses the second with FORGE_STATE_IN_USE, naming the first one\'s pid and URL and how to run both, while the first serves on', async () => {
    const project = agentProject();
    const first = await serve(project);
    const { code, output } = await serveAgain(project);
    expect(code).toBe(1);
    expect(output).toContain(`✘ FORGE_STATE_IN_USE the file state store ${join(project, '.forge')} is in use by another Forge process (pid ${first.child.pid} on this machine, serving ${first.url}, since `);
    expect(output).toContain('A2A tasks live in that process and both would run the schedules, so this one does not start');
    expect(output).toContain("hint: stop that process first; to run both, give each its own work dir (its .forge/ is the state dir: forge.yaml's workdir:, or --workdir or FORGE_WORKDIR for the bundle), or share a postgres:// store between replicas");
    expect(output).not.toMatch(/\n\s+at |--verbose for the stack/);
    expect(await healthy(first.url)).toBe(true);
    expect(holder(project).pid).toBe(first.child.pid);
  });

  it('renews its lock while it serves: the time a server in another container judges it alive by', async () => {
    const project = agentProject();
    const first = await serve(project, { FORGE_LEASE: '1s' });
    try {
      const file = join(project, '.forge', LOCK_FILE);
      // Once the URL is recorded (a rewrite, which sets the time too), any later change of the time is a renewal.
      await waitUntil(() => (holder(project).url ? true : undefined), 10_000, 'the lock to record the URL');
      const recorded = statSync(file).mtimeMs;
      await waitUntil(() => (statSync(file).mtimeMs > recorded ? true : undefined), 10_000, 'the lock to be renewed');
      expect(holder(project).pid).toBe(first.child.pid);
    } finally {
      await first.stop('SIGTERM');
    }
  });

  it('starts the second once the first stopped: SIGTERM removes the lock', async () => {
    const project = agentProject();
    const first = await serve(project);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(project, '.forge', LOCK_FILE))).toBe(false);
    const second = await serve(project);
    expect(await healthy(second.url)).toBe(true);
  });

  it('starts at once after the first crashed: a lock whose pid is dead is stale', async () => {
    const project = agentProject();
    const first = await serve(project);
    await first.stop('SIGKILL');
    expect(holder(project).pid).toBe(first.child.pid);
    const started = Date.now();
    const second = await serve(project);
    expect(Date.now() - started).toBeLessThan(10_000); // not after FORGE_LEASE (15 s)
    expect(holder(project).pid).toBe(second.child.pid);
  });

  it('serves two projects side by side, and lets forge tool run use a served project', async () => {
    const [one, two] = [agentProject(), agentProject()];
    const first = await serve(one);
    const second = await serve(two);
    expect(await healthy(first.url)).toBe(true);
    expect(await healthy(second.url)).toBe(true);
    const tool = await forge(['tool', 'run', 'greet'], one);
    expect(tool.stdout + tool.stderr).not.toContain('FORGE_STATE_IN_USE');
    expect(tool.code).toBe(0);
  });
});

describe('two bundle processes on one work dir', () => {
  it('refuses the second runtime.mjs serve, as forge run does', async () => {
    const project = agentProject();
    expect((await forge(['build'], project)).code).toBe(0);
    const bundle = join(project, '.forge-output', 'runtime.mjs');
    const workDir = tempDir();
    const env = { FORGE_WORKDIR: workDir };
    const first = await startAgentProcess(process.execPath, [bundle, 'serve', '--port', '0', '--no-auth'], { cwd: workDir, env });
    const { code, stderr } = await runProcess(process.execPath, [bundle, 'serve', '--port', '0', '--no-auth'], { cwd: workDir, env });
    expect(code).toBe(1);
    expect(stderr).toContain(`error: FORGE_STATE_IN_USE the file state store ${join(workDir, '.forge')} is in use by another Forge process (pid ${first.child.pid} on this machine, serving ${first.url}`);
    expect(stderr).toContain('hint: stop that process first');
  });
});

describe('a lock left by a process elsewhere', () => {
  it('is taken over at once when its holder in another container stopped renewing it a lease ago (pid 1 there means nothing here)', async () => {
    const project = agentProject();
    plantLock(project, { host: 'other-container', machine: 'another boot pid:[1]', pid: 1 }, 60_000);
    const second = await serve(project);
    expect(holder(project).pid).toBe(second.child.pid);
  });

  it('is waited on for at most a lease when still fresh, then taken over: a container restarted after a crash starts', async () => {
    const project = agentProject();
    plantLock(project, { host: 'other-container', machine: 'another boot pid:[1]', pid: 1 }, 0);
    // A lease longer than a start under load takes: the lock is still fresh when the server looks at it.
    const second = await serve(project, { FORGE_LEASE: '5s' });
    expect(second.output()).toMatch(/state: other-container's pid 1 \(another container or machine\) held the file store until \d s ago; waiting up to [1-5] s to see whether it still runs/);
    expect(holder(project).pid).toBe(second.child.pid);
  });

  it('refuses to start while its holder in another container keeps renewing it', async () => {
    const project = agentProject();
    const file = plantLock(project, { host: 'other-container', machine: 'another boot pid:[1]', pid: 1, url: 'http://10.0.0.7:8080' }, 0);
    const renewing = setInterval(() => utimesSync(file, new Date(), new Date()), 200);
    try {
      // A lease the renewals above keep fresh even when this process is starved for a while under load:
      // a lease gone stale between two of them would let the second start, and serve (and never end).
      const { code, output } = await serveAgain(project, { FORGE_LEASE: '5s' });
      expect(code).toBe(1);
      expect(output).toContain('FORGE_STATE_IN_USE');
      expect(output).toContain('(pid 1 on other-container, another container or machine, serving http://10.0.0.7:8080, since 2026-01-01T00:00:00.000Z)');
    } finally {
      clearInterval(renewing);
    }
  });

  it('is taken over when its pid lives here but stopped renewing (the pid was reused by another program)', async () => {
    const project = agentProject();
    plantLock(project, { pid: 1 }, 60_000); // pid 1 is alive here, and is not a Forge server
    const second = await serve(project);
    expect(holder(project).pid).toBe(second.child.pid);
  });
});

describe('lockFileStore in one process', () => {
  it('lets a later server of the same process take the dir over (a reload), and the earlier one\'s release leaves it held', async () => {
    const dir = join(tempDir(), '.forge');
    const earlier = await lockFileStore(dir, { leaseMs: 15_000 });
    const later = await lockFileStore(dir, { leaseMs: 15_000 });
    const token = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token;
    earlier?.release();
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token).toBe(token);
    later?.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('serves without a lock where the state dir cannot be made', async () => {
    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, '');
    expect(await lockFileStore(join(notADir, '.forge'), { leaseMs: 15_000 })).toBeUndefined();
  });
});
