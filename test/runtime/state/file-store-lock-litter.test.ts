/**
 * What a lock taker killed with SIGKILL leaves beside .forge/owner.lock (the
 * drafts it writes each lock or claim into before linking it into place, and
 * its claims) is removed by the next process that takes the lock, and never
 * what a live process is still using. Real processes (test/runtime/state/
 * lock-crasher.ts) stopped at each change they make to the state dir in turn.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimFile, LOCK_FILE, lockFileStore, machineId, type LockHolder } from '../../../runtime/state/file-store-lock.ts';
import { onFileEnd } from '../../helpers/file-cleanup.ts';
import { tempDir } from '../../helpers/project.ts';

/** More changes than a lock taker's life makes in any of the cases below: the loop ends on "done" well before. */
const MAX_STOPS = 40;

let crasherScript = '';
beforeAll(async () => {
  crasherScript = join(tempDir(), 'lock-crasher.mjs');
  await build({ entryPoints: [fileURLToPath(new URL('./lock-crasher.ts', import.meta.url))], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: crasherScript, logLevel: 'silent' });
});

const running = new Set<ReturnType<typeof spawn>>();
onFileEnd(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** Runs a crasher stopping at its `stopAt`th change; resolves with its first line, the child still running when it stopped. */
function startCrasher(stateDir: string, stopAt: number): Promise<{ line: string; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, [crasherScript, stateDir, String(stopAt)], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  void closed.then(() => running.delete(child));
  // Reaped once closed: a killed process's pid is then gone, not a zombie's that still answers signal 0.
  const kill = async () => {
    child.kill('SIGKILL');
    await closed;
  };
  let out = '';
  let errors = '';
  child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ line: out.split('\n')[0]!, kill });
    });
    void closed.then(() => reject(new Error(`crasher ended (${child.exitCode ?? child.signalCode}) without a word: ${errors}`)));
  });
}

/** A pid no process has any more: that of a process that ran and ended. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  return pid!;
}

function holderText(pid: number, token: string, host = hostname(), machine = machineId()): string {
  return JSON.stringify({ pid, host, machine, since: '2026-01-01T00:00:00.000Z', token } satisfies LockHolder) + '\n';
}

const cases: Record<string, (dir: string) => void> = {
  'on a state dir with no lock': () => {},
  "over a crashed server's lock": (dir) => writeFileSync(join(dir, LOCK_FILE), holderText(deadPid(), 'crashed')),
  "over a crashed server's lock and a claim on it left by a crashed takeover": (dir) => {
    const file = join(dir, LOCK_FILE);
    writeFileSync(file, holderText(deadPid(), 'crashed'));
    writeFileSync(claimFile(file, readFileSync(file)), holderText(deadPid(), 'claim'));
  },
};

function stateDir(): string {
  const dir = join(tempDir(), '.forge');
  mkdirSync(dir);
  return dir;
}

describe('a lock taker killed with SIGKILL at each change it makes to the state dir', () => {
  for (const [name, plant] of Object.entries(cases)) {
    it(`${name}: the next start takes the lock and leaves nothing else behind`, async () => {
      const faults: string[] = [];
      let stops = 0;
      for (let stopAt = 1; stopAt <= MAX_STOPS; stopAt++) {
        const dir = stateDir();
        plant(dir);
        const { line, kill } = await startCrasher(dir, stopAt);
        if (line.startsWith('done')) break;
        stops++;
        await kill();
        const left = readdirSync(dir).filter((n) => n !== LOCK_FILE);
        const lock = await lockFileStore(dir, { leaseMs: 60_000 });
        const after = readdirSync(dir).sort();
        lock?.release();
        if (!lock) faults.push(`killed ${line}: the next start took no lock`);
        else if (after.join() !== LOCK_FILE) faults.push(`killed ${line} (leaving ${left.join(', ') || 'nothing but the lock'}): the next start left ${after.join(', ')}`);
      }
      expect(stops).toBeGreaterThan(3);
      expect(stops).toBeLessThan(MAX_STOPS);
      expect(faults).toEqual([]);
    }, 300_000);
  }
});

describe("what a start leaves of another process's drafts beside the lock", () => {
  it('a live process\'s draft stays; once that process is gone, the next start removes it', async () => {
    const dir = stateDir();
    // The crasher's first change: the draft of its lock, written and not yet linked into place.
    const { line, kill } = await startCrasher(dir, 1);
    expect(line).toMatch(/^stopped after writeFileSync /);
    const draft = readdirSync(dir);
    expect(draft).toHaveLength(1);
    const first = await lockFileStore(dir, { leaseMs: 60_000 });
    expect(first).toBeDefined();
    expect(readdirSync(dir).sort()).toEqual([...draft, LOCK_FILE].sort());
    first?.release();
    await kill();
    const second = await lockFileStore(dir, { leaseMs: 60_000 });
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    second?.release();
  }, 60_000);

  it("a draft from another machine (where its pid means nothing here) stays for a lease after it was written, and goes after that", async () => {
    const dir = stateDir();
    const draft = join(dir, `${LOCK_FILE}.1-${randomUUID()}`);
    writeFileSync(draft, holderText(1, 'elsewhere', 'another-host', 'another-machine'));
    const first = await lockFileStore(dir, { leaseMs: 60_000 });
    expect(readdirSync(dir).sort()).toEqual([LOCK_FILE, basename(draft)].sort());
    first?.release();
    const twoLeasesAgo = new Date(Date.now() - 120_000);
    utimesSync(draft, twoLeasesAgo, twoLeasesAgo);
    const second = await lockFileStore(dir, { leaseMs: 60_000 });
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    second?.release();
  });
});
