/**
 * Conversation history per context (an A2A context id, a chat), kept in
 * memory and written to .forge/sessions/ after every change, so a restart
 * loses nothing. Writes go through a temp file and a rename: a crash never
 * leaves half a session.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PendingApproval } from './agent-loop.ts';
import type { ChatMessage } from './messages.ts';

export interface Session {
  id: string;
  messages: ChatMessage[];
  /** A turn paused for a person's approval. */
  pending?: PendingApproval & { taskId?: string };
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly dir: string) {}

  get(id: string): Session {
    let session = this.sessions.get(id);
    if (!session) {
      session = this.read(id) ?? { id, messages: [] };
      this.sessions.set(id, session);
    }
    return session;
  }

  save(session: Session): void {
    this.sessions.set(session.id, session);
    mkdirSync(this.dir, { recursive: true });
    const file = this.fileFor(session.id);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(session));
    renameSync(temp, file);
  }

  private read(id: string): Session | undefined {
    try {
      const session = JSON.parse(readFileSync(this.fileFor(id), 'utf8')) as Session;
      return session.id === id ? session : undefined;
    } catch {
      return undefined;
    }
  }

  /** Context ids come from clients: anything but a plain name is hashed into one. */
  private fileFor(id: string): string {
    const name = /^[A-Za-z0-9._-]{1,100}$/.test(id) && !id.startsWith('.') ? id : createHash('sha256').update(id).digest('hex');
    return join(this.dir, `${name}.json`);
  }
}
