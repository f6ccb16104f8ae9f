/**
 * Processes that start at the same instant on one file: state dir whose lock
 * was left by a crashed server: exactly one takes it over, every other one
 * refuses with FORGE_STATE_IN_USE. Real processes (test/runtime/state/
 * lock-racer.ts), released together by a go file, on a real temp dir.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimFile, LOCK_FILE, lockFileStore, machineId, type LockHolder } from '../../../runtime/state/file-store-lock.ts';
import { onFileEnd } from '../../helpers/file-cleanup.ts';
import { tempDir } from '../../helpers/project.ts';

const ROUNDS = 25;
const RACERS = 5;

let racerScript = '';
beforeAll(async () => {
  racerScript = join(tempDir(), 'lock-racer.mjs');
  await build({ entryPoints: [fileURLToPath(new URL('./lock-racer.ts', import.meta.url))], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: racerScript, logLevel: 'silent' });
});

const running: ChildProcessWithoutNullStreams[] = [];
onFileEnd(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface Racer {
  child: ChildProcessWithoutNullStreams;
  /** The racer's `n`th line of output (0: "ready", 1: its result). */
  line(n: number): Promise<string>;
  exited: Promise<unknown>;
}

function startRacer(stateDir: string, goFile: string): Racer {
  const child = spawn(process.execPath, [racerScript, stateDir, goFile], { stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(child);
  const lines: string[] = [];
  let partial = '';
  let errors = '';
  let wake = () => {};
  child.stdout.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    wake();
  });
  child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  const exited = new Promise((resolve) => child.on('close', resolve)).then(() => wake());
  const line = (n: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (lines.length > n) resolve(lines[n]!);
        else if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`racer ${child.pid} ended (${child.exitCode ?? child.signalCode}) before line ${n}: ${errors}`));
        else wake = check;
      };
      check();
    });
  return { child, line, exited };
}

/** A pid no process has any more: that of a process that ran and ended (a crashed server). */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  expect(() => process.kill(pid!, 0)).toThrow();
  return pid!;
}

function staleLock(): string {
  const lock: LockHolder = { pid: deadPid(), host: hostname(), machine: machineId(), since: '2026-01-01T00:00:00.000Z', token: 'crashed' };
  return JSON.stringify(lock) + '\n';
}

interface Round {
  results: { pid: number; won: boolean; code?: string }[];
  holder: number | undefined;
  /** Files besides the lock left in the state dir (claims, drafts). */
  leftover: string[];
  /** Whether the lock is still there once every racer ended (the winner releases it). */
  lockAfterAll: boolean;
}

/**
 * `plant`: 'before' puts the crashed server's lock in place before the racers
 * start (all of them take over); 'at go' links it into place right after the
 * go, as a server that created its lock and crashed at once: racers find
 * either no lock (and create one) or the stale one (and take it over).
 */
async function race(plant: 'before' | 'at go'): Promise<Round> {
  const root = tempDir();
  const dir = join(root, '.forge');
  mkdirSync(dir);
  const file = join(dir, LOCK_FILE);
  const goFile = join(root, 'go');
  const planted = join(root, 'stale.lock');
  writeFileSync(planted, staleLock());
  if (plant === 'before') linkSync(planted, file);
  const racers = Array.from({ length: RACERS }, () => startRacer(dir, goFile));
  try {
    await Promise.all(racers.map((r) => r.line(0)));
    writeFileSync(goFile, '');
    if (plant === 'at go') {
      try {
        linkSync(planted, file);
      } catch {
        // a racer created its lock first
      }
    }
    const results = (await Promise.all(racers.map((r) => r.line(1)))).map((l) => JSON.parse(l) as Round['results'][number]);
    const holder = (JSON.parse(readFileSync(file, 'utf8')) as LockHolder).pid;
    const leftover = readdirSync(dir).filter((name) => name !== LOCK_FILE);
    for (const r of racers) r.child.stdin.end();
    await Promise.all(racers.map((r) => r.exited));
    return { results, holder, leftover, lockAfterAll: existsSync(file) };
  } finally {
    for (const r of racers) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  }
}

/** What is wrong with a round: nothing, when exactly one racer won, the others were refused, and the lock names the winner. */
function faults(round: Round): string[] {
  const winners = round.results.filter((r) => r.won);
  const faults: string[] = [];
  if (winners.length !== 1) faults.push(`${winners.length} winners (${winners.map((w) => w.pid).join(', ')})`);
  const refusedOtherwise = round.results.filter((r) => !r.won && r.code !== 'FORGE_STATE_IN_USE');
  if (refusedOtherwise.length) faults.push(`not won, not FORGE_STATE_IN_USE: ${JSON.stringify(refusedOtherwise)}`);
  if (winners.length === 1 && round.holder !== winners[0]!.pid) faults.push(`the lock names pid ${round.holder}, the winner is ${winners[0]!.pid}`);
  if (round.leftover.length) faults.push(`left in the state dir: ${round.leftover.join(', ')}`);
  if (round.lockAfterAll) faults.push('the lock stayed after its winner ended');
  return faults;
}

async function rounds(plant: 'before' | 'at go'): Promise<string[]> {
  const bad: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const found = faults(await race(plant));
    if (found.length) bad.push(`round ${i + 1}: ${found.join('; ')}`);
  }
  return bad;
}

/*
 * The two blocks run side by side ({ concurrent: true }): the races keep the cores busy while the takeovers
 * cut short mostly wait (one waits out the 5 s a start gives a takeover under way). Each block's tests run
 * in order (it.sequential), as before; the blocks share nothing but the racer script.
 */
describe(`${RACERS} processes started together on one state dir, ${ROUNDS} times`, { concurrent: true }, () => {
  it.sequential('over a crashed server\'s lock: exactly one takes it over, the others refuse with FORGE_STATE_IN_USE', async () => {
    expect(await rounds('before')).toEqual([]);
  }, 300_000);

  it.sequential('while a crashed server\'s lock appears: a fresh start and a takeover never both win', async () => {
    expect(await rounds('at go')).toEqual([]);
  }, 300_000);
});

describe('a takeover cut short', { concurrent: true }, () => {
  function planted(): { dir: string; file: string; stale: Buffer } {
    const dir = join(tempDir(), '.forge');
    mkdirSync(dir);
    const file = join(dir, LOCK_FILE);
    writeFileSync(file, staleLock());
    return { dir, file, stale: readFileSync(file) };
  }

  function claimBy(pid: number): string {
    return JSON.stringify({ pid, host: hostname(), machine: machineId(), since: new Date().toISOString(), token: 'claim' }) + '\n';
  }

  it.sequential('by a crash (its claim on the stale lock left behind) does not block a restart', async () => {
    const { dir, file, stale } = planted();
    writeFileSync(claimFile(file, stale), claimBy(deadPid()));
    const lock = await lockFileStore(dir, { leaseMs: 60_000 });
    expect(lock).toBeDefined();
    expect((JSON.parse(readFileSync(file, 'utf8')) as LockHolder).pid).toBe(process.pid);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock?.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it.sequential('still under way (its claimant lives) is waited on, and the start refuses once that takeover is done', async () => {
    const { dir, file, stale } = planted();
    const claimant = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const claim = claimFile(file, stale);
      writeFileSync(claim, claimBy(claimant.pid!));
      let settled = false;
      const start = lockFileStore(dir, { leaseMs: 60_000 }).finally(() => (settled = true));
      start.catch(() => {}); // judged below
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      expect(readFileSync(file)).toEqual(stale);
      // The claimant puts its own lock in place and lets go of its claim, as a takeover does.
      writeFileSync(`${file}.draft`, claimBy(claimant.pid!));
      renameSync(`${file}.draft`, file);
      unlinkSync(claim);
      await expect(start).rejects.toMatchObject({ code: 'FORGE_STATE_IN_USE', message: expect.stringContaining(`pid ${claimant.pid} on this machine`) });
    } finally {
      claimant.kill('SIGKILL');
    }
  });

  it.sequential('that never ends (its claimant lives on: stopped, or a crashed one whose pid another program took) is refused after a while, naming the claim file, not waited on forever', async () => {
    const { dir, file, stale } = planted();
    const claimant = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      writeFileSync(claimFile(file, stale), claimBy(claimant.pid!));
      await expect(lockFileStore(dir, { leaseMs: 60_000 })).rejects.toMatchObject({
        code: 'FORGE_STATE_IN_USE',
        message: expect.stringContaining('which has not finished in 5 s'),
        hint: expect.stringContaining(join(dir, 'owner.lock.claim-*')),
      });
      expect(readFileSync(file)).toEqual(stale);
    } finally {
      claimant.kill('SIGKILL');
    }
  }, 30_000);
});
