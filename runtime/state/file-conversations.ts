/**
 * Conversations as files: .forge/sessions/<id>.json (today's layout, plus a
 * version). A turn holds `<id>.lock` (created exclusively, touched while the
 * turn runs, taken over once stale), so two processes on one work dir — or a
 * shared volume — take turns; inside one process turns queue in memory
 * first. Saves go through a temp file and a rename after checking the
 * version on disk is the one the turn read: nothing is ever lost silently.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StateConflictError, type ConversationStore, type Session } from './store.ts';
import { KeyedQueue } from './keyed-queue.ts';

interface StoredSession extends Session {
  version?: number;
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

  private async turn<T>(id: string, work: (session: Session) => Promise<T>): Promise<T> {
    await mkdir(this.dir, { recursive: true });
    const lock = await this.lock(id);
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
    try {
      const stored = JSON.parse(await readFile(this.fileFor(id), 'utf8')) as StoredSession;
      if (stored.id !== id) return { session: { id, messages: [] }, version: 0 };
      const { version = 0, ...session } = stored;
      return { session, version };
    } catch {
      return { session: { id, messages: [] }, version: 0 };
    }
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

  /** Takes `<file>.lock`, waiting for its holder; a lock nobody touched for STALE_LOCK_MS is taken over. */
  private async lock(id: string): Promise<{ release(): Promise<void> }> {
    const path = `${this.fileFor(id)}.lock`;
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
        if (age > STALE_LOCK_MS) await unlink(path).catch(() => {});
        else await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
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
