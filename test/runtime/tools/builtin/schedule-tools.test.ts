import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { HISTORY_LIMIT, MAX_RUNTIME_SCHEDULES, ScheduleStore } from '../../../../runtime/scheduler/schedule-store.ts';
import type { ScheduledTask } from '../../../../runtime/scheduler/scheduled-task.ts';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

const FROM_CONFIG: ScheduledTask[] = [{ id: 'nightly-report', cron: '0 2 * * *', task: 'Write the nightly report.', timezone: 'Europe/Paris', source: 'config' }];
const NAMES = ['schedule_set', 'schedule_list', 'schedule_delete', 'schedule_history'];

let work: string;
let t: ToolHarness;

beforeEach(async () => {
  work = tempDir('forge-schedules-');
  t = await tools(NAMES, { workDir: work, schedules: FROM_CONFIG });
});

describe('schedule_set', () => {
  it('creates a task, persists it under .forge/ and returns its next runs', async () => {
    const value = await t.value<{ created: boolean; next_runs: string[]; id: string }>('schedule_set', { id: 'check-queue', cron: '*/5 * * * *', task: 'Check the queue.' });
    expect(value).toMatchObject({ id: 'check-queue', cron: '*/5 * * * *', task: 'Check the queue.', source: 'runtime', created: true });
    expect(value.next_runs).toHaveLength(3);
    const [first, second] = value.next_runs.map((d) => new Date(d).getTime());
    expect(second - first).toBe(5 * 60_000);
    expect(new Date(first).getUTCMinutes() % 5).toBe(0);
    const stored = JSON.parse(readFileSync(join(work, '.forge/schedules.json'), 'utf8'));
    expect(stored.tasks).toEqual([expect.objectContaining({ id: 'check-queue', cron: '*/5 * * * *', task: 'Check the queue.' })]);
  });

  it('replaces a task with the same id, keeping when it was created', async () => {
    const first = await t.value<{ created_at: string }>('schedule_set', { id: 'poll', cron: '@hourly', task: 'a' });
    const second = await t.value<{ created: boolean; created_at: string; task: string }>('schedule_set', { id: 'poll', cron: '@every 10m', task: 'b', timezone: 'UTC' });
    expect(second).toMatchObject({ created: false, task: 'b', created_at: first.created_at });
    expect(await new ScheduleStore(work).runtimeTasks()).toHaveLength(1);
  });

  it.each([
    [{ id: 'x', cron: 'every minute', task: 't' }, 'FORGE_SCHEDULE_CRON'],
    [{ id: 'x', cron: '@daily', task: 't', timezone: 'Mars/Base' }, 'FORGE_SCHEDULE_CRON'],
    [{ id: 'Bad Id', cron: '@daily', task: 't' }, 'FORGE_TOOL_ARGS'],
    [{ id: '../escape', cron: '@daily', task: 't' }, 'FORGE_TOOL_ARGS'],
    [{ id: 'nightly-report', cron: '@daily', task: 't' }, 'FORGE_SCHEDULE_READ_ONLY'],
  ])('refuses %j with %s', async (args, code) => {
    expect(await t.call('schedule_set', args)).toMatchObject({ ok: false, error: { code } });
  });

  it('refuses a store that is a symlink leading out of the work dir', async () => {
    const elsewhere = tempDir();
    symlinkSync(elsewhere, join(work, '.forge'));
    expect(await t.call('schedule_set', { id: 'x', cron: '@daily', task: 't' })).toMatchObject({ ok: false, error: { code: 'FORGE_PATH_OUTSIDE' } });
  });

  it('refuses a new task past the limit, still replacing an existing one, and lets only one of two racing calls take the last place', async () => {
    const stored = (count: number) => ({ version: 1, tasks: Array.from({ length: count }, (_, i) => ({ id: `t${i}`, cron: '@daily', task: 't' })) });
    mkdirSync(join(work, '.forge'));
    writeFileSync(join(work, '.forge/schedules.json'), JSON.stringify(stored(MAX_RUNTIME_SCHEDULES)));
    expect(await t.call('schedule_set', { id: 'one-more', cron: '@daily', task: 't' })).toMatchObject({ ok: false, error: { code: 'FORGE_SCHEDULE_LIMIT', message: expect.stringContaining(String(MAX_RUNTIME_SCHEDULES)) } });
    expect(await t.value('schedule_set', { id: 't0', cron: '@hourly', task: 'changed' })).toMatchObject({ created: false, task: 'changed' });

    writeFileSync(join(work, '.forge/schedules.json'), JSON.stringify(stored(MAX_RUNTIME_SCHEDULES - 1)));
    const results = await Promise.all(['racer-a', 'racer-b'].map((id) => t.call('schedule_set', { id, cron: '@daily', task: 't' })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: 'FORGE_SCHEDULE_LIMIT' }) })]);
    expect(await new ScheduleStore(work).runtimeTasks()).toHaveLength(MAX_RUNTIME_SCHEDULES);
  });

  it('reports a damaged store file', async () => {
    mkdirSync(join(work, '.forge'));
    writeFileSync(join(work, '.forge/schedules.json'), '{ not json');
    expect(await t.call('schedule_set', { id: 'x', cron: '@daily', task: 't' })).toMatchObject({ ok: false, error: { code: 'FORGE_SCHEDULE_STORE', message: expect.stringContaining('not valid JSON') } });
  });
});

describe('schedule_list', () => {
  it('lists config and run-time tasks with their next and last runs', async () => {
    await t.value('schedule_set', { id: 'poll', cron: '@every 10m', task: 'Poll.' });
    await new ScheduleStore(work).appendHistory({ id: 'poll', source: 'runtime', scheduled_for: '2025-01-01T00:00:00.000Z', fired_at: '2025-01-01T00:00:01.000Z', duration_ms: 5, status: 'ok' });
    const { tasks } = await t.value<{ tasks: Record<string, unknown>[] }>('schedule_list');
    expect(tasks).toEqual([
      expect.objectContaining({ id: 'nightly-report', source: 'config', timezone: 'Europe/Paris', next_run: expect.any(String), last_run: null }),
      expect.objectContaining({ id: 'poll', source: 'runtime', timezone: 'UTC', next_run: expect.any(String), last_run: { fired_at: '2025-01-01T00:00:01.000Z', status: 'ok' } }),
    ]);
    const nightly = new Date(tasks[0].next_run as string);
    expect(nightly.toLocaleString('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' })).toBe('02:00');
  });
});

describe('schedule_delete', () => {
  it('deletes a run-time task', async () => {
    await t.value('schedule_set', { id: 'poll', cron: '@hourly', task: 'Poll.' });
    expect(await t.value('schedule_delete', { id: 'poll' })).toEqual({ id: 'poll', deleted: true });
    expect(await new ScheduleStore(work).runtimeTasks()).toEqual([]);
  });

  it('refuses to delete a task from forge.yaml', async () => {
    expect(await t.call('schedule_delete', { id: 'nightly-report' })).toMatchObject({ ok: false, error: { code: 'FORGE_SCHEDULE_READ_ONLY', message: expect.stringContaining('forge.yaml') } });
  });

  it('refuses an unknown id, naming the closest', async () => {
    await t.value('schedule_set', { id: 'poll-queue', cron: '@hourly', task: 'Poll.' });
    expect(await t.call('schedule_delete', { id: 'poll-queu' })).toMatchObject({ ok: false, error: { code: 'FORGE_SCHEDULE_UNKNOWN', hint: 'did you mean "poll-queue"?' } });
  });
});

describe('schedule_history', () => {
  it('shows firings newest first, for one task or all, up to a limit', async () => {
    const store = new ScheduleStore(work);
    for (const [id, minute] of [['a', 1], ['b', 2], ['a', 3]] as const) {
      await store.appendHistory({ id, source: 'runtime', scheduled_for: `2025-01-01T00:0${minute}:00.000Z`, fired_at: `2025-01-01T00:0${minute}:00.000Z`, duration_ms: 1, status: 'fired' });
    }
    const all = await t.value<{ entries: { id: string; fired_at: string }[] }>('schedule_history');
    expect(all.entries.map((e) => `${e.id}${e.fired_at.slice(15, 16)}`)).toEqual(['a3', 'b2', 'a1']);
    const onlyA = await t.value<{ entries: { id: string }[] }>('schedule_history', { id: 'a', limit: 1 });
    expect(onlyA.entries).toEqual([expect.objectContaining({ id: 'a', scheduled_for: '2025-01-01T00:03:00.000Z' })]);
  });

  it('keeps only the most recent firings in the history file', async () => {
    const store = new ScheduleStore(work);
    for (let i = 0; i < HISTORY_LIMIT + 200; i++) {
      await store.appendHistory({ id: 'noisy', source: 'runtime', scheduled_for: String(i), fired_at: String(i), duration_ms: 0, status: 'failed', error: 'e'.repeat(600) });
    }
    const lines = readFileSync(join(work, '.forge/schedule-history.jsonl'), 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(HISTORY_LIMIT);
    expect(lines.length).toBeLessThan(HISTORY_LIMIT + 200);
    expect(JSON.parse(lines.at(-1)!).fired_at).toBe(String(HISTORY_LIMIT + 199));
  });
});
