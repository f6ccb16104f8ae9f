import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../../runtime/scheduler/scheduler.ts';
import { HISTORY_FILE, ScheduleStore } from '../../../runtime/scheduler/schedule-store.ts';
import type { ScheduledTask } from '../../../runtime/scheduler/scheduled-task.ts';
import { tempDir } from '../../helpers/project.ts';

/** A clock the test moves by hand. */
function manualClock(start: string) {
  let now = new Date(start).getTime();
  return { now: () => new Date(now), set: (iso: string) => (now = new Date(iso).getTime()) };
}

const configTask: ScheduledTask = { id: 'digest', cron: '0 9 * * *', task: 'Send the digest.', source: 'config' };

describe('Scheduler', () => {
  it('fires a config task when it comes due, once, and records it in the history', async () => {
    const work = tempDir();
    const clock = manualClock('2025-01-01T08:59:00Z');
    const fired: string[] = [];
    const scheduler = new Scheduler({ workDir: work, configTasks: [configTask], clock: clock.now, onFire: (task, firing) => void fired.push(`${task.id}@${firing.scheduledFor.toISOString()}`) });
    await scheduler.tick();
    expect(fired).toEqual([]);
    clock.set('2025-01-01T09:00:00Z');
    await scheduler.tick();
    clock.set('2025-01-01T09:00:30Z');
    await scheduler.tick();
    await scheduler.idle();
    expect(fired).toEqual(['digest@2025-01-01T09:00:00.000Z']);
    expect(await new ScheduleStore(work).history()).toEqual([
      { id: 'digest', source: 'config', scheduled_for: '2025-01-01T09:00:00.000Z', fired_at: '2025-01-01T09:00:00.000Z', duration_ms: expect.any(Number), status: 'ok' },
    ]);
    expect(scheduler.nextRuns()).toEqual({ 'config:digest': '2025-01-02T09:00:00.000Z' });
  });

  it('records a firing as "fired" when no handler is attached, and a throwing handler as failed', async () => {
    const work = tempDir();
    const clock = manualClock('2025-01-01T08:59:00Z');
    const plain = new Scheduler({ workDir: work, configTasks: [configTask], clock: clock.now });
    await plain.tick();
    clock.set('2025-01-01T09:00:05Z');
    await plain.tick();
    await plain.idle();
    const failing = new Scheduler({ workDir: work, configTasks: [{ ...configTask, id: 'broken' }], clock: clock.now, onFire: () => Promise.reject(new Error('model unreachable')) });
    await failing.tick();
    clock.set('2025-01-02T09:00:00Z');
    await failing.tick();
    await failing.idle();
    const history = await new ScheduleStore(work).history();
    expect(history.map((h) => [h.id, h.status, h.error])).toEqual([
      ['broken', 'failed', 'model unreachable'],
      ['digest', 'fired', undefined],
    ]);
  });

  it('picks up tasks set and deleted at run time without a restart', async () => {
    const work = tempDir();
    const store = new ScheduleStore(work);
    const clock = manualClock('2025-01-01T10:00:00Z');
    const fired: string[] = [];
    const scheduler = new Scheduler({ workDir: work, clock: clock.now, onFire: (task) => void fired.push(task.id) });
    await scheduler.tick();
    await store.saveTask({ id: 'poll', cron: '@every 10m', task: 'Check the queue.' });
    await scheduler.tick(); // sees it: first due at 10:10
    clock.set('2025-01-01T10:10:00Z');
    await scheduler.tick();
    clock.set('2025-01-01T10:20:00Z');
    await scheduler.tick();
    await store.deleteTask('poll');
    clock.set('2025-01-01T10:30:00Z');
    await scheduler.tick();
    await scheduler.idle();
    expect(fired).toEqual(['poll', 'poll']);
    expect(scheduler.nextRuns()).toEqual({});
  });

  it('fires once after a long pause instead of once per missed time', async () => {
    const work = tempDir();
    const clock = manualClock('2025-01-01T10:00:00Z');
    const fired: string[] = [];
    const scheduler = new Scheduler({ workDir: work, configTasks: [{ id: 'tick', cron: '* * * * *', task: 't', source: 'config' }], clock: clock.now, onFire: (_t, f) => void fired.push(f.scheduledFor.toISOString()) });
    await scheduler.tick();
    clock.set('2025-01-01T12:00:30Z');
    await scheduler.tick();
    await scheduler.tick();
    await scheduler.idle();
    expect(fired).toEqual(['2025-01-01T10:01:00.000Z']);
    expect(scheduler.nextRuns()['config:tick']).toBe('2025-01-01T12:01:00.000Z');
  });

  it('records a firing as skipped while the previous one is still running', async () => {
    const work = tempDir();
    const clock = manualClock('2025-01-01T10:00:00Z');
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const scheduler = new Scheduler({ workDir: work, configTasks: [{ id: 'slow', cron: '@every 1m', task: 't', source: 'config' }], clock: clock.now, onFire: () => blocked });
    await scheduler.tick();
    clock.set('2025-01-01T10:01:00Z');
    await scheduler.tick();
    clock.set('2025-01-01T10:02:00Z');
    await scheduler.tick();
    release();
    await scheduler.idle();
    const statuses = (await new ScheduleStore(work).history()).map((h) => h.status).sort();
    expect(statuses).toEqual(['ok', 'skipped']);
  });

  it('skips a task with a broken expression, warning once, and keeps running the others', async () => {
    const work = tempDir();
    mkdirSync(join(work, '.forge'));
    writeFileSync(join(work, '.forge/schedules.json'), JSON.stringify({ version: 1, tasks: [{ id: 'bad', cron: 'nonsense', task: 'x' }] }));
    const warnings: string[] = [];
    const clock = manualClock('2025-01-01T08:59:00Z');
    const fired: string[] = [];
    const scheduler = new Scheduler({ workDir: work, configTasks: [configTask], clock: clock.now, onFire: (t) => void fired.push(t.id), log: { debug() {}, info() {}, warn: (m) => warnings.push(m) } });
    await scheduler.tick();
    clock.set('2025-01-01T09:00:00Z');
    await scheduler.tick();
    await scheduler.idle();
    expect(fired).toEqual(['digest']);
    expect(warnings).toEqual([expect.stringContaining('task "bad" is skipped')]);
  });

  it('fires on a real timer with start() and stops with stop()', async () => {
    const work = tempDir();
    const fired: number[] = [];
    const scheduler = new Scheduler({ workDir: work, configTasks: [{ id: 'fast', cron: '@every 1s', task: 't', source: 'config' }], pollMs: 50, onFire: () => void fired.push(Date.now()) });
    scheduler.start();
    await new Promise((resolve) => setTimeout(resolve, 2600));
    await scheduler.stop();
    const count = fired.length;
    expect(count).toBeGreaterThanOrEqual(1);
    expect(count).toBeLessThanOrEqual(3);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(fired.length).toBe(count);
    expect(readFileSync(join(work, HISTORY_FILE), 'utf8').trim().split('\n')).toHaveLength(count);
  });
});
