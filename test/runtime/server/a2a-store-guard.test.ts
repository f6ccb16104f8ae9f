/**
 * The A2A store guard on its own: it answers FORGE_STATE_UNAVAILABLE for the
 * store's StateUnavailableError only (an errno from anything else is the
 * SDK's to answer), and its ping before a message leaves no timer behind and
 * is shared by the messages that come while it is under way.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { A2AStoreGuard } from '../../../runtime/server/a2a/store-guard.ts';
import { StateUnavailableError } from '../../../runtime/store-unavailable.ts';

function logger() {
  const warnings: string[] = [];
  return { warnings, log: { debug() {}, info() {}, warn: (line: string) => void warnings.push(line) } };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' });

afterEach(() => {
  vi.useRealTimers();
});

describe('A2AStoreGuard', () => {
  it("leaves an error that is not the store's to the SDK, though its errno is one a store away gives", async () => {
    const { warnings, log } = logger();
    const guard = new A2AStoreGuard(undefined, log);
    const error = refused();
    const handler = guard.guard({ getTask: async (_params: unknown, _context: unknown) => Promise.reject(error) });
    const context = {};
    await expect(handler.getTask({ id: 't' }, context)).rejects.toBe(error);
    expect(guard.answerFor('tasks/get', context)).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('answers the store away (StateUnavailableError) as FORGE_STATE_UNAVAILABLE, the driver\'s line in the log only', async () => {
    const { warnings, log } = logger();
    const guard = new A2AStoreGuard(undefined, log);
    const handler = guard.guard({ getTask: async (_params: unknown, _context: unknown) => Promise.reject(new StateUnavailableError(refused())) });
    const context = {};
    await expect(handler.getTask({ id: 't' }, context)).rejects.toBeInstanceOf(StateUnavailableError);
    expect(guard.answerFor('tasks/get', context)).toEqual({ code: -32000, message: 'the state store cannot be reached right now', data: { code: 'FORGE_STATE_UNAVAILABLE', hint: expect.stringContaining('retry') } });
    expect(warnings).toEqual(['a2a: tasks/get answered FORGE_STATE_UNAVAILABLE: the state store cannot be reached (connect ECONNREFUSED 127.0.0.1:8080)']);
  });

  it('leaves no timer behind once the ping before a message answers', async () => {
    vi.useFakeTimers();
    const guard = new A2AStoreGuard(async () => {}, logger().log);
    expect(await guard.refuseSend('message/send')).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('pings once for the messages that come while a ping is under way', async () => {
    let pings = 0;
    let answer!: () => void;
    const guard = new A2AStoreGuard(() => {
      pings++;
      return new Promise<void>((resolve) => (answer = resolve));
    }, logger().log);
    const sends = [guard.refuseSend('message/send'), guard.refuseSend('message/stream'), guard.refuseSend('SendMessage')];
    answer();
    expect(await Promise.all(sends)).toEqual([undefined, undefined, undefined]);
    expect(pings).toBe(1);
    // The next message pings again.
    const next = guard.refuseSend('message/send');
    answer();
    expect(await next).toBeUndefined();
    expect(pings).toBe(2);
  });

  it('refuses every message that waited on a ping that failed, one warning each', async () => {
    const { warnings, log } = logger();
    const guard = new A2AStoreGuard(() => Promise.reject(new StateUnavailableError(refused())), log);
    const answers = await Promise.all([guard.refuseSend('message/send'), guard.refuseSend('message/send')]);
    expect(answers).toEqual([expect.objectContaining({ data: expect.objectContaining({ code: 'FORGE_STATE_UNAVAILABLE' }) }), expect.objectContaining({ data: expect.objectContaining({ code: 'FORGE_STATE_UNAVAILABLE' }) })]);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toBe('a2a: message/send answered FORGE_STATE_UNAVAILABLE: the state store cannot be reached (connect ECONNREFUSED 127.0.0.1:8080)');
  });
});
