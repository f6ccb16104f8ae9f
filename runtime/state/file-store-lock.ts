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
 *
 * Of processes that start together over one stale lock, exactly one takes it
 * over and the others refuse: a lock that exists changes hands only under a
 * claim on its exact content (swap), never by removing it and creating anew.
 * The files a process killed midway leaves beside the lock go once the lock
 * is next taken (removeLitter).
 */
import { createHash, randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
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
  const mine = JSON.stringify(me) + '\n';
  let holder: LockHolder | undefined;
  let busyFor = 0;
  // Each turn but a wait on a takeover under way follows a change made by another process meanwhile.
  for (let changes = 0; changes < MAX_CHANGES; ) {
    const taken = tryCreate(stateDir, file, mine, options.log);
    if (taken !== 'exists') return taken ? takenOver(stateDir, file, me, options) : undefined;
    const seen = readLock(file);
    if (seen === undefined) {
      changes++; // removed meanwhile (released): created anew on the next turn
      continue;
    }
    holder = parseHolder(seen);
    if (holder && !(await isStale(file, holder, me, options))) throw inUse(stateDir, holder, me);
    // Stale, or no lock at all: replaced by this process's own, unless another process replaced it first.
    const outcome = swap(file, file, seen, mine, me, options.leaseMs);
    if (outcome === 'done') return takenOver(stateDir, file, me, options);
    if (outcome === 'failed') {
      options.log?.debug(`state: no lock on ${stateDir}: the stale lock could not be replaced`);
      return undefined;
    }
    if (outcome !== 'busy') changes++;
    else if ((busyFor += BUSY_WAIT_MS) > MAX_BUSY_MS) throw claimStuck(stateDir);
    else await delay(BUSY_WAIT_MS);
  }
  throw inUse(stateDir, holder, me);
}

/** The lock is this process's: what killed processes left beside it goes, and it is held. */
function takenOver(stateDir: string, file: string, me: LockHolder, options: LockOptions): FileStoreLock {
  removeLitter(stateDir, me, options.leaseMs);
  return holdLock(file, me, options);
}

/**
 * A process killed (kill -9, a crash, a power cut) between making a file beside the lock and removing it
 * leaves it there, and nothing else ever would: a draft (a lock or claim written whole before it is linked or
 * renamed into place), or a claim whose takeover ended with the lock replaced (a claim left on the lock as it
 * is now is taken over by the next start; one on a lock gone by is never looked at again). The process that
 * has just taken the lock removes those whose maker is gone, judged as a claim's claimant is (claimLeft: its
 * pid here, else a lease without renewal), so a start under way keeps its own. A claim goes as a lock changes
 * hands (swap), under a claim of its own: a process taking it over meanwhile keeps what it took.
 */
function removeLitter(stateDir: string, me: LockHolder, leaseMs: number): void {
  const lockFile = join(stateDir, LOCK_FILE);
  let names: string[];
  try {
    names = readdirSync(stateDir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(stateDir, name);
    const isDraft = DRAFT_NAME.test(name);
    if (!isDraft && !CLAIM_NAME.test(name)) continue;
    const seen = readLock(file);
    if (seen === undefined) continue; // gone meanwhile
    const maker = parseHolder(seen);
    // A draft is written in place, so one being written may not parse yet; a claim is linked whole.
    const left = maker ? claimLeft(file, maker, me, leaseMs) : !isDraft || renewedAgo(file) > leaseMs;
    if (!left) continue;
    if (isDraft) removeLock(file);
    else swap(lockFile, file, seen, undefined, me, leaseMs);
  }
}

/** A draft (draftFor) of the lock or of a claim: the name, a pid and a UUID. */
const DRAFT_NAME = /^owner\.lock(\.claim-[0-9a-f]{32})?\.\d+-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/;
/** A claim (claimFile) on the lock or on a claim. */
const CLAIM_NAME = /^owner\.lock\.claim-[0-9a-f]{32}$/;

/**
 * A takeover that never ends: a claim beside the lock whose claimant still seems alive, past any
 * takeover's few file operations: its process is stopped, or it crashed and its pid is another's
 * now. Refused, not waited on forever (a start that hangs says nothing) and not taken over (the
 * claimant, if only stopped, would go on and take the lock too).
 */
function claimStuck(stateDir: string): ForgeError {
  return new ForgeError(
    'FORGE_STATE_IN_USE',
    `the file state store ${stateDir} is being taken over by another Forge process, which has not finished in ${MAX_BUSY_MS / 1000} s: a claim file (${LOCK_FILE}.claim-…) beside the lock names a process that still runs`,
    `if no other Forge process is starting on this store (its pid may be another program's now), remove ${join(stateDir, `${LOCK_FILE}.claim-*`)} and start again`,
  );
}

/** How often the lock may change hands under one start before it gives up (refusing, never serving unlocked). */
const MAX_CHANGES = 50;
/** How long a start waits at a time for another process's takeover, which takes a few file operations, to finish. */
const BUSY_WAIT_MS = 20;
/** How long in all before it judges that takeover stuck (claimStuck). */
const MAX_BUSY_MS = 5_000;

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
function tryCreate(stateDir: string, file: string, content: string, log?: Logger): boolean | 'exists' {
  // Written whole, then linked into place: another process never reads a lock half-written.
  const draft = draftFor(file);
  try {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(draft, content);
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

/** A lock's bytes, undefined when there is none; one that cannot be read counts as empty (no lock at all, stale). */
function readLock(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : Buffer.alloc(0);
  }
}

/** The holder a lock names; undefined for one that is not a lock (written by something else, or damaged): stale. */
function parseHolder(content: Buffer): LockHolder | undefined {
  try {
    const holder = JSON.parse(content.toString('utf8')) as LockHolder;
    return typeof holder.pid === 'number' && typeof holder.token === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}

function readHolder(file: string): LockHolder | undefined {
  const content = readLock(file);
  return content && parseHolder(content);
}

type Outcome = 'done' | 'changed' | 'busy' | 'failed';

/**
 * Replaces `file` (the lock, or a claim on it) by `next`, or removes it, if it
 * still holds `expected`: the one way a lock that exists changes hands.
 *
 * Reading a lock and then replacing it is two steps, and two processes that
 * both read the same stale lock would both replace it, the later evicting the
 * earlier. So the step is taken under a claim: a file named after the exact
 * bytes to be replaced, created exclusively (link()), which only one process
 * can hold. The holder of the claim re-reads the file: still those bytes, it
 * replaces them (rename(), atomic); any other, it leaves them, for a process
 * that read the same bytes but comes late must not evict the one that took
 * over before it (the claim is removed once the lock changed, so it can be
 * had again, but its re-read then finds the lock changed). Everything between
 * claim and removal is synchronous: a claim by a live process is a takeover
 * under way, waited on ('busy'); one by a process that died meanwhile is
 * taken over in turn, by a claim on the claim.
 */
function swap(lockFile: string, file: string, expected: Buffer, next: string | undefined, me: LockHolder, leaseMs: number): Outcome {
  const claim = claimFile(lockFile, expected);
  const claimed = takeClaim(lockFile, claim, me, leaseMs);
  if (claimed !== 'held') return claimed;
  try {
    if (!expected.equals(readLock(file) ?? NOTHING)) return 'changed';
    return (next === undefined ? remove(file) : place(file, next)) ? 'done' : 'failed';
  } finally {
    removeLock(claim);
  }
}

const NOTHING = Buffer.from('\u0000absent');

/** The claim a process holds while it replaces a lock (or a claim) whose content is `content`. */
export function claimFile(lockFile: string, content: Buffer): string {
  return `${lockFile}.claim-${createHash('sha256').update(content).digest('hex').slice(0, 32)}`;
}

function takeClaim(lockFile: string, claim: string, me: LockHolder, leaseMs: number): 'held' | 'changed' | 'busy' | 'failed' {
  // Each claim's content is its own (a token of its own), so a claim on it names it alone.
  const content = () => JSON.stringify({ ...me, token: randomUUID() }) + '\n';
  const draft = draftFor(lockFile);
  try {
    writeFileSync(draft, content());
    linkSync(draft, claim);
    return 'held';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return 'failed';
  } finally {
    removeLock(draft);
  }
  const seen = readLock(claim);
  if (seen === undefined) return 'changed'; // that takeover ended meanwhile
  const claimant = parseHolder(seen);
  if (claimant && !claimLeft(claim, claimant, me, leaseMs)) return 'busy';
  const outcome = swap(lockFile, claim, seen, content(), me, leaseMs);
  return outcome === 'done' ? 'held' : outcome;
}

/** Whether a claim was left by a process that stopped before it removed it (it is held for a few file operations). */
function claimLeft(claim: string, claimant: LockHolder, me: LockHolder, leaseMs: number): boolean {
  // This process takes and removes its claims without yielding: one of its own was left behind.
  if (claimant.host === me.host && claimant.machine === me.machine && (claimant.pid === me.pid || !isProcessAlive(claimant.pid))) return true;
  return renewedAgo(claim) > leaseMs;
}

function draftFor(lockFile: string): string {
  return `${lockFile}.${process.pid}-${randomUUID()}`;
}

/** Writes whole, then renames into place, so that a reader never sees the file half-written. */
function place(file: string, content: string): boolean {
  const draft = draftFor(file);
  try {
    writeFileSync(draft, content);
    renameSync(draft, file);
    return true;
  } catch {
    removeLock(draft);
    return false;
  }
}

function remove(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
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

/** `holder` undefined: the lock kept changing hands while this process looked (MAX_CHANGES), so who holds it is not known. */
function inUse(stateDir: string, holder: LockHolder | undefined, me: LockHolder): ForgeError {
  const where = holder?.host === me.host && holder.machine === me.machine ? 'on this machine' : `on ${holder?.host}, another container or machine`;
  const serving = holder?.url ? `, serving ${holder.url}` : '';
  const who = holder ? `pid ${holder.pid} ${where}${serving}, since ${holder.since}` : 'its lock kept changing hands while this one started';
  return new ForgeError(
    'FORGE_STATE_IN_USE',
    `the file state store ${stateDir} is in use by another Forge process (${who}): A2A tasks live in that process and both would run the schedules, so this one does not start`,
    "stop that process first; to run both, give each its own work dir (its .forge/ is the state dir: forge.yaml's workdir:, or --workdir or FORGE_WORKDIR for the bundle), or share a postgres:// store between replicas (state: in forge.yaml, or FORGE_STATE_URL)",
  );
}

/** Renews the lock while this process serves; a process that lost it (it stopped renewing for a lease) says so once. */
function holdLock(file: string, me: LockHolder, options: LockOptions): FileStoreLock {
  let holder = me;
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
  // Removed, and rewritten, the way a lock changes hands (swap): a process taking over this one meanwhile keeps what it took.
  const replace = (next: string | undefined) => {
    const current = readLock(file);
    if (current && parseHolder(current)?.token === me.token) swap(file, file, current, next, me, options.leaseMs);
  };
  const release = () => {
    clearInterval(renew);
    process.off('exit', release);
    replace(undefined);
  };
  // A process that exits without stopping (an uncaught error) leaves no lock behind.
  process.on('exit', release);
  return {
    serving: (url) => {
      holder = { ...holder, url };
      replace(JSON.stringify(holder) + '\n');
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
