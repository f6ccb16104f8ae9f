/**
 * The `file:` store's conversations: writers that do not share memory (three
 * store objects on one directory, as three processes on one volume would)
 * take turns through the lock file and lose nothing; a lock left by a
 * process that died is taken over.
 */
import { readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { tempDir } from '../../helpers/project.ts';

describe('FileConversations', () => {
  it('keeps all of 30 messages written at once by three writers', async () => {
    const dir = tempDir();
    const writers = [new FileConversations(dir), new FileConversations(dir), new FileConversations(dir)];
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        writers[i % 3].withTurn('shared', async (session) => {
          // A turn takes a while (the model answers): a writer without the lock would overwrite others here.
          await new Promise((resolve) => setTimeout(resolve, 2));
          session.messages.push({ role: 'user', content: `m${i}` });
        }),
      ),
    );
    const stored = JSON.parse(readFileSync(join(dir, 'shared.json'), 'utf8'));
    expect(stored.messages.map((m: { content: string }) => m.content).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`).sort());
    expect(stored.version).toBe(30);
  });

  it('takes over a lock that its holder stopped touching', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ctx.json.lock'), 'a process that died');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'ctx.json.lock'), old, old);
    const store = new FileConversations(dir);
    await store.withTurn('ctx', async (session) => void session.messages.push({ role: 'user', content: 'hello' }));
    expect((await store.read('ctx')).messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('keeps what a failed turn did, and lets the next turn in', async () => {
    const store = new FileConversations(tempDir());
    await expect(
      store.withTurn('ctx', async (session) => {
        session.messages.push({ role: 'user', content: 'first' });
        throw new Error('the model is down');
      }),
    ).rejects.toThrow('the model is down');
    await store.withTurn('ctx', async (session) => void session.messages.push({ role: 'user', content: 'second' }));
    expect((await store.read('ctx')).messages.map((m) => m.content)).toEqual(['first', 'second']);
  });
});
