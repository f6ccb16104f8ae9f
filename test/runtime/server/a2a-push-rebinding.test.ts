/**
 * A plain-http webhook is allowed only because its name resolved to an
 * address allowed_addresses lists (a sidecar, the private network). If the
 * name resolves to a public address by the time the connection is made (DNS
 * rebinding, between the check before each try and the connect), the
 * notification is not sent: its token would cross the internet in clear.
 */
import { describe, expect, it } from 'vitest';
import type { StreamResponse } from '@a2a-js/sdk';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient, type HostLookup } from '../../../runtime/net/http-client.ts';
import { PolicyPushSender } from '../../../runtime/server/a2a/push-notifications.ts';
import { checkedPushConfigs } from '../../../runtime/server/a2a/webhook-checks.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';
import { defaultServerCallContextBuilder, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { startServer } from '../../helpers/http-server.ts';

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const update = (taskId: string): StreamResponse =>
  ({ payload: { $case: 'statusUpdate', value: { taskId, contextId: 'c', status: { state: 2, message: undefined, timestamp: '' }, metadata: undefined } } }) as unknown as StreamResponse;

describe('a plain-http webhook whose name resolves elsewhere between the check and the connection', () => {
  it('is not sent to the public address it now resolves to', async () => {
    const webhook = await startServer((_req, res) => res.end());
    // The first lookup (the check as the config is set) answers loopback; every later one, the connection's, a public address.
    let lookups = 0;
    const lookup: HostLookup = (_name, _options, callback) => callback(null, [{ address: ++lookups === 1 ? '127.0.0.1' : '93.184.215.14', family: 4 }]);
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['hooks.example'], allowed_addresses: [`127.0.0.1:${webhook.port}`] }), { lookup });
    const store = checkedPushConfigs(new MemoryPushConfigs(), http);
    await store.save('t1', context, { tenant: '', id: 'h', taskId: 't1', url: `http://hooks.example:${webhook.port}/hook`, token: 'hook-secret', authentication: undefined });
    const warnings: string[] = [];
    const sender = new PolicyPushSender(store, http, { debug: () => {}, info: () => {}, warn: (line) => warnings.push(line) }, { attempts: 3, retryDelayMs: 0, timeoutMs: 3000 });
    await sender.send(update('t1'), context);
    // Refused, and not tried again: the refusal is the address's, not a failure.
    expect(lookups).toBe(2);
    expect(warnings).toEqual([expect.stringMatching(/push notification for task t1 to http:\/\/hooks\.example:\d+\/hook failed: refused: .*plain http to a public address/)]);
    expect(webhook.requests).toEqual([]);
  });

  it('is sent when the name still resolves to the allowed address, with no lookup but the one its connection is opened with (then kept alive)', async () => {
    const webhook = await startServer((_req, res) => res.end());
    let lookups = 0;
    const lookup: HostLookup = (_name, _options, callback) => callback(null, [{ address: (lookups++, '127.0.0.1'), family: 4 }]);
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['hooks.example'], allowed_addresses: [`127.0.0.1:${webhook.port}`] }), { lookup });
    const store = new MemoryPushConfigs();
    await store.save('t1', context, { tenant: '', id: 'h', taskId: 't1', url: `http://hooks.example:${webhook.port}/hook`, token: 'hook-secret', authentication: undefined });
    const warnings: string[] = [];
    const sender = new PolicyPushSender(store, http, { debug: () => {}, info: () => {}, warn: (line) => warnings.push(line) }, { attempts: 1 });
    await sender.send(update('t1'), context);
    await sender.send(update('t1'), context);
    expect(warnings).toEqual([]);
    expect(webhook.requests.map((r) => r.headers['x-a2a-notification-token'])).toEqual(['hook-secret', 'hook-secret']);
    expect(lookups).toBe(1);
  });

  it('is refused without a lookup or a try again once the egress policy no longer allows its name', async () => {
    const webhook = await startServer((_req, res) => res.end());
    let lookups = 0;
    const lookup: HostLookup = (_name, _options, callback) => callback(null, [{ address: (lookups++, '127.0.0.1'), family: 4 }]);
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['hooks.example'], allowed_addresses: [`127.0.0.1:${webhook.port}`] }), { lookup });
    const store = checkedPushConfigs(new MemoryPushConfigs(), http);
    await store.save('t1', context, { tenant: '', id: 'h', taskId: 't1', url: `http://hooks.example:${webhook.port}/hook`, token: 'hook-secret', authentication: undefined });
    http.setEgress(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['other.example'], allowed_addresses: [`127.0.0.1:${webhook.port}`] }));
    const warnings: string[] = [];
    await new PolicyPushSender(store, http, { debug: () => {}, info: () => {}, warn: (line) => warnings.push(line) }, { attempts: 3, retryDelayMs: 0 }).send(update('t1'), context);
    expect(warnings).toEqual([expect.stringMatching(/push notification for task t1 to http:\/\/hooks\.example:\d+\/hook failed: refused: egress to hooks\.example refused/)]);
    expect(lookups).toBe(1);
    expect(webhook.requests).toEqual([]);
  });
});
