/**
 * The `file:` store serves one process: A2A tasks live in it and its
 * scheduler runs the schedules. A second server started on the same .forge/
 * would answer "task not found" for the first one's tasks and run every
 * schedule twice, silently; so a serving process holds .forge/owner.lock
 * and a second one refuses to start (as Postgres does with postmaster.pid).
 *
 * A lock must never block a restart after a crash. Its holder is judged:
 * - on this machine and pid namespace: by its pid (dead: the lock is stale;
 *   this very process: an earlier server of its own, taken over);
 * - elsewhere (another container, where pid 1 is everyone's; another host on
 *   a shared volume): by its renewals. The holder touches the file every
 *   third of FORGE_LEASE; a lock not touched for a lease is stale. A fresh one
 *   is watched until it would go stale, so a container restarted after a
 *   crash only starts later, and a live twin is refused.
 */
import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ForgeError } from '../diagnostics.ts';
import { isProcessAlive } from '../process-alive.ts';
import type { Logger } from '../tools/model.ts';

export const LOCK_FILE = 'owner.lock';

/** What the lock file records about its holder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** Boot id and pid namespace: equal only when the holder's pid means a process here. */
  machine: string;
  since: string;
  /** Tells this holding apart from a later one by the same pid. */
  token: string;
  url?: string;
}

export interface FileStoreLock {
  /** Records the URL the holder serves, for the message a second process prints. */
  serving(url: string): void;
  /** Removes the lock if it is still this process's. */
  release(): void;
}

interface LockOptions {
  leaseMs: number;
  log?: Logger;
}

/** Takes the state dir for this process, or throws FORGE_STATE_IN_USE when another live server holds it. */
export async function lockFileStore(stateDir: string, options: LockOptions): Promise<FileStoreLock | undefined> {
  const file = join(stateDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, host: hostname(), machine: machineId(), since: new Date().toISOString(), token: randomUUID() };
  for (let attempt = 0; attempt < 3; attempt++) {
    const taken = tryCreate(stateDir, file, me, options.log);
    if (taken !== 'exists') return taken ? holdLock(file, me, options) : undefined;
    const holder = readHolder(file);
    if (holder && !(await isStale(file, holder, me, options))) throw inUse(stateDir, holder, me);
    removeLock(file);
  }
  return undefined;
}

/** Boot id and pid namespace (Linux; empty elsewhere): with the host name, what makes a pid mean a process here. */
export function machineId(): string {
  const read = (f: () => string) => {
    try {
      return f().trim();
    } catch {
      return '';
    }
  };
  return [read(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')), read(() => readlinkSync('/proc/self/ns/pid'))].join(' ');
}

/** true: created; 'exists': someone holds it; false: the dir cannot be written (a read-only work dir serves without a lock). */
function tryCreate(stateDir: string, file: string, me: LockHolder, log?: Logger): boolean | 'exists' {
  // Written whole, then linked into place: another process never reads a lock half-written.
  const draft = `${file}.${me.pid}-${me.token}`;
  try {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(draft, JSON.stringify(me) + '\n');
    linkSync(draft, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
    log?.debug(`state: no lock on ${stateDir}: ${(err as Error).message}`);
    return false;
  } finally {
    removeLock(draft);
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return typeof holder.pid === 'number' && typeof holder.token === 'string' ? holder : undefined;
  } catch {
    return undefined; // gone meanwhile, or half-written by a process that crashed: stale either way
  }
}

async function isStale(file: string, holder: LockHolder, me: LockHolder, options: LockOptions): Promise<boolean> {
  if (holder.host === me.host && holder.machine === me.machine) {
    // A pid here: the holder is known at once (a pid reused by another program shows as no renewals).
    if (holder.pid === me.pid || !isProcessAlive(holder.pid)) return true;
    return renewedAgo(file) > options.leaseMs;
  }
  return !(await stillRenewed(file, holder, options));
}

function renewedAgo(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

/** Whether a holder elsewhere still renews its lock: watched until it would have gone stale. */
async function stillRenewed(file: string, holder: LockHolder, options: LockOptions): Promise<boolean> {
  const wait = options.leaseMs - renewedAgo(file);
  if (wait <= 0) return false;
  options.log?.info(`state: ${holder.host}'s pid ${holder.pid} (another container or machine) held the file store until ${Math.round(renewedAgo(file) / 1000)} s ago; waiting up to ${Math.ceil(wait / 1000)} s to see whether it still runs`);
  await delay(wait + 50);
  return renewedAgo(file) <= options.leaseMs && readHolder(file)?.token === holder.token;
}

function removeLock(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already removed by another process taking over: the next attempt finds out
  }
}

function inUse(stateDir: string, holder: LockHolder, me: LockHolder): ForgeError {
  const where = holder.host === me.host && holder.machine === me.machine ? 'on this machine' : `on ${holder.host}, another container or machine`;
  const serving = holder.url ? `, serving ${holder.url}` : '';
  return new ForgeError(
    'FORGE_STATE_IN_USE',
    `the file state store ${stateDir} is in use by another Forge process (pid ${holder.pid} ${where}${serving}, since ${holder.since}): A2A tasks live in that process and both would run the schedules, so this one does not start`,
    "stop that process first; to run both, give each its own work dir (its .forge/ is the state dir: forge.yaml's workdir:, or --workdir or FORGE_WORKDIR for the bundle), or share a postgres:// store between replicas (state: in forge.yaml, or FORGE_STATE_URL)",
  );
}

/** Renews the lock while this process serves; a process that lost it (it stopped renewing for a lease) says so once. */
function holdLock(file: string, me: LockHolder, options: LockOptions): FileStoreLock {
  let holder = me;
  const ours = () => readHolder(file)?.token === me.token;
  const renew = setInterval(() => {
    const current = readHolder(file);
    if (current?.token !== me.token) {
      clearInterval(renew);
      // A later server of this same process took over on purpose; anyone else found this one stale.
      if (current?.pid !== me.pid) options.log?.warn(`state: another process took over the file store lock ${file} (this one had not renewed it for FORGE_LEASE)`);
      return;
    }
    touch(file);
  }, Math.max(100, Math.floor(options.leaseMs / 3)));
  renew.unref();
  const release = () => {
    clearInterval(renew);
    process.off('exit', release);
    if (ours()) removeLock(file);
  };
  // A process that exits without stopping (an uncaught error) leaves no lock behind.
  process.on('exit', release);
  return {
    serving: (url) => {
      holder = { ...holder, url };
      if (ours()) rewrite(file, holder);
    },
    release,
  };
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // removed meanwhile: the next renewal finds it is no longer this process's
  }
}

/** Replaces the lock's content in one rename, so that a reader never sees it half-written. */
function rewrite(file: string, holder: LockHolder): void {
  const draft = `${file}.${holder.pid}-${holder.token}`;
  try {
    writeFileSync(draft, JSON.stringify(holder) + '\n');
    renameSync(draft, file);
  } catch {
    removeLock(draft);
  }
}
