/**
 * Conversations as files: .forge/sessions/<id>.json (today's layout, plus a
 * version). A turn holds `<id>.lock` (created exclusively, touched while the
 * turn runs, taken over once stale), so two processes on one work dir — or a
 * shared volume — take turns; inside one process turns queue in memory
 * first. Saves go through a temp file and a rename after checking the
 * version on disk is the one the turn read: nothing is ever lost silently.
 * With FORGE_CONVERSATION_RETENTION, the files no turn saved for that long
 * are deleted (deleteIdle), each under its lock.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StateConflictError, type ConversationStore, type Session } from './store.ts';
import { KeyedQueue } from './keyed-queue.ts';

interface StoredSession extends Session {
  version?: number;
}

interface FileLock {
  release(): Promise<void>;
}

/** A lock file untouched for this long belongs to a process that died. */
const STALE_LOCK_MS = 30_000;
const RETRY_MS = 25;

export class FileConversations implements ConversationStore {
  private readonly queues = new KeyedQueue();

  constructor(private readonly dir: string) {}

  async read(id: string): Promise<Session> {
    const { session } = await this.load(id);
    return session;
  }

  withTurn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T> {
    return this.queues.run(id, () => this.turn(id, work));
  }

  /**
   * Deletes the conversations no turn saved since `before` (a file's mtime), except those `kept` names
   * (waiting for an approval, used by an unfinished task); returns their ids. Each is checked again
   * under its lock, which a turn holds from before it reads until after it saves: a conversation a turn
   * holds now is passed over, and one a turn takes next finds it deleted (empty), never half of it.
   */
  async deleteIdle(before: number, kept: (session: Session) => boolean): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const deleted: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const file = join(this.dir, name);
      if (!(await isIdle(file, before))) continue;
      const lock = await this.tryLock(file);
      if (!lock) continue;
      try {
        const stored = await readStored(file);
        if (!stored || !(await isIdle(file, before)) || kept(stored)) continue;
        await unlink(file);
        deleted.push(stored.id);
      } finally {
        await lock.release();
      }
    }
    return deleted;
  }

  /**
   * Runs `work` if no file holds this conversation, under its lock, and says whether it ran: a turn that holds it
   * now, perhaps its first with its save still to come, passes it over.
   */
  async whileAbsent(id: string, work: () => void): Promise<boolean> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileFor(id);
    const lock = await this.tryLock(file);
    if (!lock) return false;
    try {
      if (await stat(file).then(() => true, (err: NodeJS.ErrnoException) => err.code !== 'ENOENT')) return false;
      work();
      return true;
    } finally {
      await lock.release();
    }
  }

  private async turn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T> {
    await mkdir(this.dir, { recursive: true });
    const lock = await this.lock(this.fileFor(id));
    try {
      const { session, version } = await this.load(id);
      try {
        return await work(session);
      } finally {
        await this.save(session, version);
      }
    } finally {
      await lock.release();
    }
  }

  private async load(id: string): Promise<{ session: Session; version: number }> {
    const stored = await readStored(this.fileFor(id));
    if (stored?.id !== id) return { session: { id, messages: [] }, version: 0 };
    const { version = 0, ...session } = stored;
    return { session, version };
  }

  private async save(session: Session, expected: number): Promise<void> {
    const file = this.fileFor(session.id);
    const { version: onDisk } = await this.load(session.id);
    if (onDisk !== expected) throw new StateConflictError(`conversation "${session.id}" changed while this turn ran (version ${onDisk}, expected ${expected})`);
    const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    const stored: StoredSession = { ...session, version: expected + 1 };
    await writeFile(temp, JSON.stringify(stored));
    await rename(temp, file);
  }

  /** Takes `<file>.lock`, waiting for its holder. */
  private async lock(file: string): Promise<FileLock> {
    for (;;) {
      const lock = await this.tryLock(file);
      if (lock) return lock;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  /** Takes `<file>.lock`, or undefined while another holds it; a lock nobody touched for STALE_LOCK_MS is taken over. */
  private async tryLock(file: string): Promise<FileLock | undefined> {
    const path = `${file}.lock`;
    const token = `${process.pid}:${randomUUID()}`;
    for (;;) {
      try {
        const handle = await open(path, 'wx');
        await handle.writeFile(token);
        await handle.close();
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = await stat(path).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age <= STALE_LOCK_MS) return undefined;
        await unlink(path).catch(() => {});
      }
    }
    const touch = setInterval(() => void utimes(path, new Date(), new Date()).catch(() => {}), STALE_LOCK_MS / 3);
    touch.unref();
    return {
      async release() {
        clearInterval(touch);
        const holder = await readFile(path, 'utf8').catch(() => '');
        if (holder === token) await unlink(path).catch(() => {});
      },
    };
  }

  /** Context ids come from clients: anything but a plain name is hashed into one. */
  private fileFor(id: string): string {
    const name = /^[A-Za-z0-9._-]{1,100}$/.test(id) && !id.startsWith('.') ? id : createHash('sha256').update(id).digest('hex');
    return join(this.dir, `${name}.json`);
  }
}

/** The conversation a file holds, or undefined: none there, or unreadable (a turn starts it afresh). */
async function readStored(file: string): Promise<StoredSession | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredSession;
  } catch {
    return undefined;
  }
}

/** Whether no turn saved the file since `before` (a save renames a new file in: a new mtime); false once it is gone. */
async function isIdle(file: string, before: number): Promise<boolean> {
  return stat(file).then((s) => s.mtimeMs < before, () => false);
}
