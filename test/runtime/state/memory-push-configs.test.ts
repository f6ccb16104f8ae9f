/** Push notification configs in memory (the `file:` store): scoped like its tasks, and bounded. */
import { describe, expect, it } from 'vitest';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { defaultServerCallContextBuilder, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';

const context = (tenant = '', requestedVersion = '1.0') => defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion, tenant });
const config = (taskId: string, id = ''): TaskPushNotificationConfig => ({ tenant: '', id, taskId, url: `https://hooks.example/${taskId}`, token: 't', authentication: undefined });

describe('MemoryPushConfigs', () => {
  it('gives a config without an id one, replaces one of the same id, and keeps the version it was set over', async () => {
    const store = new MemoryPushConfigs();
    const first = config('t1');
    await store.save('t1', context(), first);
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    await store.save('t1', context('', '0.3'), { ...first, url: 'https://hooks.example/other' });
    expect(await store.loadWithMetadata('t1', context())).toEqual([{ config: { ...first, url: 'https://hooks.example/other' }, wireVersion: '0.3' }]);
    // Another tenant sees none of it.
    expect(await store.load('t1', context('other'))).toEqual([]);
    await store.delete('t1', context(), first.id);
    expect(await store.load('t1', context())).toEqual([]);
    expect(store.size).toBe(0);
  });

  it("keeps the configs of at most maxTasks tasks, dropping the oldest set", async () => {
    const store = new MemoryPushConfigs(2);
    await store.save('a', context(), config('a', 'x'));
    await store.save('b', context(), config('b', 'x'));
    await store.save('a', context(), config('a', 'y'));
    await store.save('c', context(), config('c', 'x'));
    expect(store.size).toBe(2);
    expect(await store.load('b', context())).toEqual([]);
    expect((await store.load('a', context())).map((c) => c.id)).toEqual(['x', 'y']);
    expect((await store.load('c', context())).map((c) => c.id)).toEqual(['x']);
  });

  it('keeps about maxBytes of configs, dropping the oldest set, however large each one is', async () => {
    const store = new MemoryPushConfigs(1000, 64 * 1024);
    const big = (taskId: string): TaskPushNotificationConfig => ({ ...config(taskId, 'x'), token: 'k'.repeat(8 * 1024) });
    for (let i = 0; i < 100; i++) await store.save(`t${i}`, context(), big(`t${i}`));
    expect(await store.load('t0', context())).toEqual([]);
    expect(store.size).toBeLessThan(10);
    expect(store.retainedBytes).toBeLessThanOrEqual(64 * 1024);
    expect((await store.load('t99', context())).map((c) => c.id)).toEqual(['x']);
    // A delete gives its bytes back.
    await store.delete('t99', context(), 'x');
    const left = store.retainedBytes;
    for (let i = 0; i < 100; i++) await store.delete(`t${i}`, context(), 'x');
    expect(store.retainedBytes).toBeLessThan(left || 1);
    expect(store.size).toBe(0);
  });

  it('saveWithin keeps a task under the limit, however many sets run at once; one of the same id is replaced', async () => {
    const store = new MemoryPushConfigs();
    const saved = await Promise.all(Array.from({ length: 30 }, (_, i) => store.saveWithin('t', context(), config('t', `h${i}`), 10)));
    expect(saved.filter((result) => result === 'saved')).toHaveLength(10);
    expect(await store.load('t', context())).toHaveLength(10);
    expect(await store.saveWithin('t', context(), { ...config('t', 'h0'), url: 'https://hooks.example/again' }, 10)).toBe('saved');
    expect(await store.saveWithin('t', context(), config('t', 'new'), 10)).toBe('full');
  });
});
