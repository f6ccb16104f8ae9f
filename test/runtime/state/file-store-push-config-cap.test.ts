/**
 * The `file:` store's cap on how many tasks' push configs it keeps (12,000 by
 * default) never drops the configs of a task still running or paused, whose
 * webhook waits for its final state: a finished task's go first, then those
 * of a task the store does not hold; with only live tasks' left, a new one is
 * refused, with an A2A error, rather than kept by dropping another's. It
 * dropped the oldest set, live or not, which a very high FORGE_MAX_TURNS
 * could reach.
 */
import { describe, expect, it } from 'vitest';
import type { Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { checkedPushConfigs } from '../../../runtime/server/a2a/webhook-checks.ts';
import { createFileStore } from '../../../runtime/state/file-store.ts';
import { defaultServerCallContextBuilder, RequestMalformedError, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { tempDir } from '../../helpers/project.ts';

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const WORKING = 2;
const COMPLETED = 3;
const INPUT_REQUIRED = 6;
const task = (id: string, state: number) => ({ id, contextId: `c-${id}`, status: { state, timestamp: '' }, history: [], artifacts: [] }) as unknown as Task;
const config = (taskId: string): TaskPushNotificationConfig => ({ tenant: '', id: 'h', taskId, url: 'http://127.0.0.1:9/hook', token: 't', authentication: undefined });

/** The file store with room for `max` tasks' configs, and `tasks` saved in their states. */
async function storeWith(max: number, tasks: [string, number][]) {
  const state = createFileStore(tempDir(), { maxPushConfigTasks: max });
  for (const [id, st] of tasks) await state.tasks.save(task(id, st), context);
  const saveFor = (id: string) => state.pushConfigs.saveWithin(id, context, config(id), 10, true);
  const kept = async (id: string) => (await state.pushConfigs.load(id, context)).length > 0;
  return { state, saveFor, kept };
}

describe("the file store's cap on tasks with push configs", () => {
  it("drops a finished task's configs to make room, not those of an older running or paused one", async () => {
    const { saveFor, kept } = await storeWith(3, [['running', WORKING], ['paused', INPUT_REQUIRED], ['done', COMPLETED], ['new', WORKING]]);
    for (const id of ['running', 'paused', 'done']) expect(await saveFor(id)).toBe('saved');
    expect(await saveFor('new')).toBe('saved');
    expect(await kept('running')).toBe(true);
    expect(await kept('paused')).toBe(true);
    expect(await kept('new')).toBe(true);
    expect(await kept('done')).toBe(false);
  });

  it('refuses a new config when every task with configs is running or paused, and keeps theirs', async () => {
    const { saveFor, kept } = await storeWith(2, [['running', WORKING], ['paused', INPUT_REQUIRED], ['new', WORKING]]);
    expect(await saveFor('running')).toBe('saved');
    expect(await saveFor('paused')).toBe('saved');
    expect(await saveFor('new')).toBe('store full');
    expect(await kept('running')).toBe(true);
    expect(await kept('paused')).toBe(true);
    expect(await kept('new')).toBe(false);
  });

  it('drops the configs a message set for a task that never came to be before refusing', async () => {
    const { state, kept } = await storeWith(2, [['running', WORKING], ['new', WORKING]]);
    expect(await state.pushConfigs.saveWithin('running', context, config('running'), 10, true)).toBe('saved');
    expect(await state.pushConfigs.saveWithin('never', context, config('never'), 10)).toBe('saved');
    expect(await state.pushConfigs.saveWithin('new', context, config('new'), 10, true)).toBe('saved');
    expect(await kept('never')).toBe(false);
    expect(await kept('running')).toBe(true);
  });

  it('makes room again once a task finishes', async () => {
    const { state, saveFor, kept } = await storeWith(2, [['running', WORKING], ['paused', INPUT_REQUIRED], ['new', WORKING]]);
    await saveFor('running');
    await saveFor('paused');
    await state.tasks.save(task('running', COMPLETED), context);
    expect(await saveFor('new')).toBe('saved');
    expect(await kept('paused')).toBe(true);
    expect(await kept('running')).toBe(false);
  });

  it('answers the client with an A2A error (invalid params) saying why', async () => {
    const { state } = await storeWith(1, [['running', WORKING], ['new', WORKING]]);
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1:9'] }));
    const store = checkedPushConfigs(state.pushConfigs, http);
    await store.save('running', context, config('running'));
    const refused = await store.save('new', context, config('new')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(RequestMalformedError);
    expect((refused as Error).message).toMatch(/^push notification config refused: .*every such task is still running or waiting for its client; set it again once one finishes$/);
    expect(await state.pushConfigs.load('running', context)).toHaveLength(1);
  });
});
