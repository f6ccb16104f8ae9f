/**
 * The `file:` store's retention of conversations (FORGE_CONVERSATION_RETENTION,
 * opt-in): a sweep deletes the files in .forge/sessions/ no turn saved for the
 * retention, and never one a turn holds, one waiting for an approval, or one a
 * task running or paused in this process still uses; the session-tier tools
 * forged in a conversation it deletes go with it, from .forge/forged/ and from
 * the registry serving them. Real files in a temp dir; their times are written
 * in the past instead of waiting for them to age.
 */
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { activeState, closeOpenedStates, setActiveState } from '../../../runtime/state/active-state.ts';
import { sweepIdleFileConversations } from '../../../runtime/state/conversation-retention.ts';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { createFileStore } from '../../../runtime/state/file-store.ts';
import { MemoryTasks } from '../../../runtime/state/memory-tasks.ts';
import { openStateStore } from '../../../runtime/state/open-store.ts';
import type { ForgedRemoval, StateStore } from '../../../runtime/state/store.ts';
import type { ForgeResult } from '../../../runtime/tools/emergent/forge-request.ts';
import { ForgedStore, forgedRoot, type ForgedRecord } from '../../../runtime/tools/emergent/forged-store.ts';
import type { Logger } from '../../../runtime/tools/model.ts';
import { defaultServerCallContextBuilder, Task, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { calcJson } from '../../helpers/forge-requests.ts';
import { tempDir } from '../../helpers/project.ts';
import { tools } from '../../helpers/tools.ts';

const DAY = 24 * 60 * 60 * 1000;
const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });

function setUp() {
  const dir = tempDir();
  return { dir, conversations: new FileConversations(dir), tasks: new MemoryTasks() };
}

/** A work dir as the file: store keeps it: its conversations (.forge/sessions/) and its forged tools (.forge/forged/). */
function workDirWithForged() {
  const workDir = tempDir();
  const dir = join(workDir, '.forge', 'sessions');
  return { workDir, dir, conversations: new FileConversations(dir), forged: new ForgedStore(forgedRoot(workDir)) };
}

/** A conversation with one turn, its file last written `daysAgo` days back. */
async function saveConversation(conversations: FileConversations, dir: string, id: string, daysAgo: number): Promise<void> {
  await conversations.withTurn(id, async (session) => void session.messages.push({ role: 'user', content: `hello from ${id}` }));
  age(dir, `${id}.json`, daysAgo);
}
function age(dir: string, name: string, daysAgo: number): void {
  const then = new Date(Date.now() - daysAgo * DAY);
  utimesSync(join(dir, name), then, then);
}
const conversationFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.json')).sort();

function capturingLog(): Logger & { infos: string[] } {
  const infos: string[] = [];
  return { infos, info: (message) => void infos.push(message), warn: () => {}, debug: () => {} };
}

/** Runs `work` with `store` made the process's, as serve makes it (its sweeps start then), then closes it. */
async function asServed(store: StateStore, work: () => Promise<void>): Promise<void> {
  try {
    await setActiveState(store);
    await work();
  } finally {
    await setActiveState(undefined);
    await store.close();
  }
}

describe('the retention of conversations in the file: store', () => {
  it('deletes a conversation without a turn for the retention, keeps a recent one, and says how many went', async () => {
    const { dir, conversations, tasks } = setUp();
    await saveConversation(conversations, dir, 'old', 91);
    await saveConversation(conversations, dir, 'recent', 89);
    const log = capturingLog();

    expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY }, log)).toBe(1);

    expect(conversationFiles(dir)).toEqual(['recent.json']);
    expect((await conversations.read('old')).messages).toEqual([]);
    expect((await conversations.read('recent')).messages).toEqual([{ role: 'user', content: 'hello from recent' }]);
    expect(log.infos).toEqual(['state store: deleted 1 conversation without a turn for 90d (FORGE_CONVERSATION_RETENTION)']);
  });

  it('deletes a conversation whose context id is kept under a hashed file name', async () => {
    const { dir, conversations, tasks } = setUp();
    await conversations.withTurn('a context/with a slash', async (session) => void session.messages.push({ role: 'user', content: 'hi' }));
    for (const name of conversationFiles(dir)) age(dir, name, 100);
    expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY })).toBe(1);
    expect(conversationFiles(dir)).toEqual([]);
  });

  it('keeps a conversation a paused or running task of this process still uses, however old, and deletes one whose task finished', async () => {
    const { dir, conversations, tasks } = setUp();
    const unfinished = [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED, TaskState.TASK_STATE_WORKING];
    for (const state of [...unfinished, TaskState.TASK_STATE_COMPLETED]) {
      await saveConversation(conversations, dir, `ctx-${state}`, 400);
      await tasks.save(Task.fromJSON({ id: `task-${state}`, contextId: `ctx-${state}`, status: { state: TaskState[state], timestamp: new Date().toISOString() } }), context);
    }

    expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY })).toBe(1);
    expect(conversationFiles(dir)).toEqual(unfinished.map((state) => `ctx-${state}.json`).sort());
  });

  it('keeps a conversation waiting for an approval that no task holds (after a restart, or a schedule paused for approval)', async () => {
    const { dir, conversations, tasks } = setUp();
    await conversations.withTurn('schedule-nightly', async (session) => void (session.pending = { calls: [], decisions: {} }));
    age(dir, 'schedule-nightly.json', 400);
    await saveConversation(conversations, dir, 'schedule-done', 400);

    expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY })).toBe(1);
    expect(conversationFiles(dir)).toEqual(['schedule-nightly.json']);
  });

  it('keeps a conversation whose turn runs now, and takes it at a sweep after the turn', async () => {
    const { dir, conversations, tasks } = setUp();
    await saveConversation(conversations, dir, 'in-turn', 400);
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    // A turn that saves nothing new: its file keeps its old time once the turn ends.
    const turn = conversations.withTurn('in-turn', () => new Promise<void>((resolve) => ((release = resolve), started())));
    await running;
    try {
      expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY })).toBe(0);
      expect(conversationFiles(dir)).toEqual(['in-turn.json']);
    } finally {
      release();
      await turn;
    }
    age(dir, 'in-turn.json', 400);
    expect(await sweepIdleFileConversations(conversations, tasks, { retentionMs: 90 * DAY })).toBe(1);
    expect(existsSync(join(dir, 'in-turn.json.lock'))).toBe(false);
  });

  it('is swept by the store on its schedule, with the retention it was opened with', async () => {
    const workDir = tempDir();
    const dir = join(workDir, '.forge', 'sessions');
    const log = capturingLog();
    const store = createFileStore(workDir, { conversationRetentionMs: 30 * DAY, sweeps: true, sweepEveryMs: 20, log });
    await asServed(store, async () => {
      await saveConversation(store.conversations as FileConversations, dir, 'recent', 20);
      await saveConversation(store.conversations as FileConversations, dir, 'old', 40);
      await waitUntil(async () => (conversationFiles(dir).includes('old.json') ? undefined : true), 20_000, 'the old conversation deleted by the sweep');
      expect(conversationFiles(dir)).toEqual(['recent.json']);
      expect(log.infos).toContain('state store: deleted 1 conversation without a turn for 30d (FORGE_CONVERSATION_RETENTION)');
    });
  });

  // With the default schedule the first sweep came only after an hour, which a process replaced more often never reached.
  it('sweeps within five minutes of the store opening with the default schedule, not an hour later', async () => {
    const workDir = tempDir();
    const dir = join(workDir, '.forge', 'sessions');
    await saveConversation(new FileConversations(dir), dir, 'old', 40);
    // Only the timers are fake (the sweep's file work is real): five minutes pass at once, as the store sees them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let store;
    try {
      store = createFileStore(workDir, { conversationRetentionMs: 30 * DAY, sweeps: true });
      void setActiveState(store);
      vi.advanceTimersByTime(5 * 60_000);
    } finally {
      vi.useRealTimers();
    }
    try {
      await waitUntil(async () => (conversationFiles(dir).includes('old.json') ? undefined : true), 20_000, 'the old conversation deleted by the first sweep');
    } finally {
      await setActiveState(undefined);
      await store.close();
    }
  });

  // A one-shot command (`forge tool run`, `call`) opened the store as the server does, and with a retention set swept
  // it too: it could take a session tool's files away while the server serves it.
  it('is swept only by the long-running server: a store a one-shot command opens schedules no sweep', async () => {
    const env = { FORGE_CONVERSATION_RETENTION: '30d' };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      // As `forge tool run` and `call` open it (the tools that keep state ask for it on first use).
      await activeState(tempDir(), env);
      expect(vi.getTimerCount()).toBe(0);
      await closeOpenedStates();
      // As serve opens it, and makes it the process's once it holds its lock.
      const served = await openStateStore({ workDir: tempDir(), env, sweeps: true });
      expect(vi.getTimerCount()).toBe(0);
      await setActiveState(served);
      expect(vi.getTimerCount()).toBe(1);
      await setActiveState(undefined);
      expect(vi.getTimerCount()).toBe(0);
      await served.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A forged tool's record as forge_tool keeps it, of `tier` for `owner`, forged `daysAgo` days back. */
function forgedRecord(name: string, tier: 'session' | 'agent', owner?: string, daysAgo = 0): ForgedRecord {
  return { request: { ...calcJson, name, scope: tier } as ForgedRecord['request'], tier, ...(owner ? { owner } : {}), forgedAt: new Date(Date.now() - daysAgo * DAY).toISOString(), verdict: { approved: true, checks: [], reasoning: 'ok' }, testResults: [] };
}
const forgedNames = (workDir: string) => new ForgedStore(forgedRoot(workDir)).list().map((record) => record.request.name);

// A session tool stayed when its conversation was deleted: served to no one, kept in .forge/forged/, and back for a
// client reusing the context id, without the conversation that forged it.
describe('the session tools of the conversations the file: store deletes', () => {
  it('takes out the session tools forged in a deleted conversation, and no other forged tool', async () => {
    const { workDir, dir, conversations, forged } = workDirWithForged();
    await saveConversation(conversations, dir, 'old', 91);
    await saveConversation(conversations, dir, 'recent', 89);
    await conversations.withTurn('waiting', async (session) => void (session.pending = { calls: [], decisions: {} }));
    age(dir, 'waiting.json', 400);
    forged.save(forgedRecord('of_old', 'session', 'context:old'));
    forged.save(forgedRecord('of_recent', 'session', 'context:recent'));
    forged.save(forgedRecord('of_waiting', 'session', 'context:waiting'));
    forged.save(forgedRecord('of_mcp_old', 'session', 'mcp:old'));
    forged.save(forgedRecord('of_agent', 'agent'));
    const removals: ForgedRemoval[][] = [];
    const log = capturingLog();

    expect(await sweepIdleFileConversations(conversations, new MemoryTasks(), { retentionMs: 90 * DAY, forged, onForgedRemoved: (removed) => removals.push(removed) }, log)).toBe(1);

    expect(forgedNames(workDir)).toEqual(['of_agent', 'of_mcp_old', 'of_recent', 'of_waiting']);
    expect(removals).toEqual([[{ name: 'of_old', forgedAt: expect.any(String) }]]);
    expect(log.infos).toEqual(['state store: deleted 1 conversation without a turn for 90d, with the 1 session tool forged in it (FORGE_CONVERSATION_RETENTION)']);
  });

  it('is no longer served by the process once the store on its schedule deleted its conversation; the kept conversation keeps its own', async () => {
    const workDir = tempDir();
    const dir = join(workDir, '.forge', 'sessions');
    const h = await tools(['forge_tool', 'math_calculate', 'json_parse'], { workDir, config: { forge_tool: { timeout: 5 } } });
    for (const [name, session] of [
      ['calc_old', 'context:old'],
      ['calc_recent', 'context:recent'],
    ]) {
      const result = await h.registry.execute('forge_tool', { ...calcJson, name }, { session, timeoutMs: 60_000 });
      expect((result as { value: ForgeResult }).value).toMatchObject({ success: true, tier: 'session' });
    }
    const conversations = new FileConversations(dir);
    await saveConversation(conversations, dir, 'old', 40);
    await saveConversation(conversations, dir, 'recent', 20);
    const log = capturingLog();
    // As serve opens it: with the work dir's forged tools, which forge_tool keeps.
    const store = createFileStore(workDir, { conversationRetentionMs: 30 * DAY, sweeps: true, sweepEveryMs: 20, forgedFiles: new ForgedStore(forgedRoot(workDir)), log });
    // As serve makes it the process's: forge_tool follows it.
    await asServed(store, async () => {
      await waitUntil(async () => (h.registry.has('calc_old') ? undefined : true), 20_000, 'calc_old no longer served');
      expect(conversationFiles(dir)).toEqual(['recent.json']);
      expect(forgedNames(workDir)).toEqual(['calc_recent']);
      expect(await h.registry.execute('calc_old', { expression: '1+1' }, { session: 'context:old' })).toMatchObject({ ok: false });
      expect(await h.registry.execute('calc_recent', { expression: '6*7' }, { session: 'context:recent' })).toMatchObject({ ok: true, value: { result: 42 } });
      expect(log.infos).toContain('state store: deleted 1 conversation without a turn for 30d, with the 1 session tool forged in it (FORGE_CONVERSATION_RETENTION)');
      expect(h.warnings).toEqual([]);
    });
  });

  // The first sweep could come before serve made the store the process's: while it waited for the lock of another
  // process serving these files, or before forge_tool followed the store; the tool it took out stayed served here
  // without its files. The store is left unactivated for as long as the sweeps of the store on its schedule take
  // (the test above), which is the check's reach before the fix; after it, nothing is swept however long it waits.
  it('is not swept before the server makes the store its own; then the deleted conversation\'s tool is no longer served', async () => {
    const workDir = tempDir();
    const dir = join(workDir, '.forge', 'sessions');
    const h = await tools(['forge_tool', 'math_calculate', 'json_parse'], { workDir, config: { forge_tool: { timeout: 5 } } });
    const result = await h.registry.execute('forge_tool', { ...calcJson, name: 'calc_early' }, { session: 'context:early', timeoutMs: 60_000 });
    expect((result as { value: ForgeResult }).value).toMatchObject({ success: true, tier: 'session' });
    const conversations = new FileConversations(dir);
    await saveConversation(conversations, dir, 'early', 40);
    const log = capturingLog();
    const store = createFileStore(workDir, { conversationRetentionMs: 30 * DAY, sweeps: true, sweepEveryMs: 20, forgedFiles: new ForgedStore(forgedRoot(workDir)), log });
    try {
      await waitUntil(async () => (conversationFiles(dir).includes('early.json') ? undefined : true), 3_000, 'a sweep before the store is the process\'s').catch(() => {});
      expect(conversationFiles(dir)).toEqual(['early.json']);
      expect(forgedNames(workDir)).toEqual(['calc_early']);
      await setActiveState(store);
      await waitUntil(async () => (h.registry.has('calc_early') ? undefined : true), 20_000, 'calc_early no longer served');
      expect(conversationFiles(dir)).toEqual([]);
      expect(forgedNames(workDir)).toEqual([]);
      expect(h.warnings).toEqual([]);
    } finally {
      await setActiveState(undefined);
      await store.close();
    }
  });
});

// A process stopped between deleting a conversation and taking its session tools out left the tools forever.
describe('the session tools of conversations an earlier sweep deleted', () => {
  it('are taken out when no file holds their conversation and they were forged before the retention; others stay', async () => {
    const { workDir, dir, conversations, forged } = workDirWithForged();
    await saveConversation(conversations, dir, 'kept', 10);
    await conversations.withTurn('a context/with a slash', async (session) => void session.messages.push({ role: 'user', content: 'hi' }));
    forged.save(forgedRecord('of_gone', 'session', 'context:gone', 91));
    forged.save(forgedRecord('of_gone_too', 'session', 'context:gone', 95));
    forged.save(forgedRecord('of_kept', 'session', 'context:kept', 91));
    forged.save(forgedRecord('of_hashed', 'session', 'context:a context/with a slash', 91));
    // No file, but forged within the retention: its conversation could be saving its first turn.
    forged.save(forgedRecord('of_young', 'session', 'context:young', 89));
    forged.save(forgedRecord('of_mcp', 'session', 'mcp:gone', 91));
    forged.save(forgedRecord('of_agent', 'agent', undefined, 91));
    const removals: ForgedRemoval[][] = [];
    const log = capturingLog();

    expect(await sweepIdleFileConversations(conversations, new MemoryTasks(), { retentionMs: 90 * DAY, forged, onForgedRemoved: (removed) => removals.push(removed) }, log)).toBe(0);

    expect(forgedNames(workDir)).toEqual(['of_agent', 'of_hashed', 'of_kept', 'of_mcp', 'of_young']);
    expect(removals.flat().map((tool) => tool.name).sort()).toEqual(['of_gone', 'of_gone_too']);
    expect(log.infos).toEqual(['state store: removed 2 session tools of conversations deleted earlier (FORGE_CONVERSATION_RETENTION)']);
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });

  it('stay while a first turn of their conversation, not saved yet, holds it; and stay once it saved', async () => {
    const { workDir, dir, conversations, forged } = workDirWithForged();
    forged.save(forgedRecord('of_first', 'session', 'context:first', 91));
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const turn = conversations.withTurn('first', (session) => new Promise<void>((resolve) => ((release = () => (session.messages.push({ role: 'user', content: 'hi' }), resolve())), started())));
    await running;
    try {
      expect(conversationFiles(dir)).toEqual([]);
      await sweepIdleFileConversations(conversations, new MemoryTasks(), { retentionMs: 90 * DAY, forged });
      expect(forgedNames(workDir)).toEqual(['of_first']);
    } finally {
      release();
      await turn;
    }
    await sweepIdleFileConversations(conversations, new MemoryTasks(), { retentionMs: 90 * DAY, forged });
    expect(conversationFiles(dir)).toEqual(['first.json']);
    expect(forgedNames(workDir)).toEqual(['of_first']);
  });
});

// A stateful MCP session lives in its process: after a restart none of the sessions that forged the tools on disk
// can come back (each had an owner made in that process), and their tools stayed forever.
describe('the session tools of MCP sessions of an earlier process', () => {
  it('are taken out by the serving store, with or without a retention; other tools stay, and a one-shot store takes none', async () => {
    const workDir = tempDir();
    const forged = new ForgedStore(forgedRoot(workDir));
    forged.save(forgedRecord('of_mcp', 'session', 'mcp:3b1f0c2e-0000-4000-8000-000000000001'));
    forged.save(forgedRecord('of_context', 'session', 'context:kept'));
    forged.save(forgedRecord('of_stdio', 'session', 'stdio'));
    forged.save(forgedRecord('of_agent', 'agent'));
    const oneShot = createFileStore(workDir, { sweepEveryMs: 20 });
    await oneShot.close();
    expect(forgedNames(workDir)).toEqual(['of_agent', 'of_context', 'of_mcp', 'of_stdio']);

    const log = capturingLog();
    const store = createFileStore(workDir, { sweeps: true, sweepEveryMs: 20, forgedFiles: forged, log });
    const removed: ForgedRemoval[] = [];
    // As serve's forge_tool follows it (the sweep waits for that: it would serve a tool without its files).
    store.onForgedRemoved!((tools) => removed.push(...tools));
    await asServed(store, async () => {
      await waitUntil(async () => (forgedNames(workDir).includes('of_mcp') ? undefined : true), 20_000, 'of_mcp taken out');
      expect(forgedNames(workDir)).toEqual(['of_agent', 'of_context', 'of_stdio']);
      expect(removed.map((tool) => tool.name)).toEqual(['of_mcp']);
      expect(log.infos).toContain('state store: removed 1 session tool forged in MCP sessions of an earlier process');
    });
  });

  // Read again as the store was made the process's anew, the tools of this process's own live sessions counted as left.
  it('are those on disk the first time the store is the process\'s: a session of its own since is not taken for one', async () => {
    const workDir = tempDir();
    const dir = join(workDir, '.forge', 'sessions');
    const forged = new ForgedStore(forgedRoot(workDir));
    const store = createFileStore(workDir, { conversationRetentionMs: 30 * DAY, sweeps: true, sweepEveryMs: 20, forgedFiles: forged });
    store.onForgedRemoved!(() => {});
    try {
      await setActiveState(store);
      forged.save(forgedRecord('of_live', 'session', 'mcp:3b1f0c2e-0000-4000-8000-000000000002'));
      await setActiveState(undefined);
      await saveConversation(store.conversations as FileConversations, dir, 'old', 40);
      await setActiveState(store);
      // A sweep takes the MCP leftovers out before it deletes conversations: this one came after that.
      await waitUntil(async () => (conversationFiles(dir).includes('old.json') ? undefined : true), 20_000, 'the old conversation deleted by a sweep');
      expect(forgedNames(workDir)).toEqual(['of_live']);
    } finally {
      await setActiveState(undefined);
      await store.close();
    }
  });

  it('a session that ends takes its own out through the store, and no other session\'s', async () => {
    const workDir = tempDir();
    const forged = new ForgedStore(forgedRoot(workDir));
    forged.save(forgedRecord('mine', 'session', 'mcp:ended'));
    forged.save(forgedRecord('theirs', 'session', 'mcp:open'));
    const store = createFileStore(workDir, { forgedFiles: forged });
    const removed: ForgedRemoval[] = [];
    store.onForgedRemoved!((tools) => removed.push(...tools));
    expect(await store.removeSessionTools(['mcp:ended'])).toBe(1);
    expect(forgedNames(workDir)).toEqual(['theirs']);
    expect(removed.map((tool) => tool.name)).toEqual(['mine']);
    expect(await store.removeSessionTools(['mcp:ended'])).toBe(0);
    await store.close();
  });
});
