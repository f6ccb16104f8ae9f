/**
 * Many replicas of one built bundle behind a round-robin load balancer,
 * sharing a real PostgreSQL (Debian's, started on loopback for this file):
 * what broke when each replica kept its own state — paused tasks, lost
 * messages, MCP sessions, duplicate schedule firings, per-replica tokens,
 * abrupt stops — now works. The single-process cases run again on the
 * default `file:` store.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, type Message } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AgentProcess } from '../../helpers/agent-process.ts';
import { auth, callTool, FLEET_TOKEN, fleetParts, getTask, sendMessage, startReplica, waitUntil } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { runProcess, tempDir } from '../../helpers/project.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from '../../helpers/round-robin-proxy.ts';
import type { ScriptedServer, ScriptedTurn } from '../../helpers/scripted-llm.ts';
import { relay } from '../../helpers/tcp-relay.ts';

let postgres: TestPostgres;
let llm: ScriptedServer;
let bundle: string;
/** Turns the model never answers, by the text that asked: blocks run side by side, each waits on its own. */
const hung = new Map<string, number>();
const hungOn = (text: string) => hung.get(text) ?? 0;
/** Answers held back until the test lets them go. */
let held = 0;
let letHeldAnswerGo: (() => void) | undefined;

/**
 * The model: answers by the last message, so replicas may ask in any order; by its last paragraph, as a
 * message after a turn that never answered (a cancelled, failed or hung one) is sent joined to its question.
 */
function model(body: Record<string, any>) {
  const last = body.messages.at(-1);
  if (last.role === 'tool') return { text: `done: ${last.content}` };
  const text = String(last.content).split('\n\n').at(-1)!;
  if (text === 'approve-me') return { toolCalls: [{ name: 'danger', arguments: { message: 'boom' } }] };
  if (text.startsWith('hang')) {
    hung.set(text, hungOn(text) + 1);
    return new Promise<never>(() => {}); // a model that never answers: the turn is mid-flight when its replica dies
  }
  if (text === 'hold-then-echo') {
    held++;
    return new Promise<ScriptedTurn>((resolve) => (letHeldAnswerGo = () => resolve({ toolCalls: [{ name: 'echo', arguments: { message: 'while away' } }] })));
  }
  if (text === 'count') return { text: JSON.stringify(body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content)) };
  return { text: `ok: ${text}` };
}

beforeAll(async () => {
  ({ postgres, llm, bundle } = await fleetParts(model, 100_000, {
    tools: ['file_create', 'schedule_set', 'schedule_list', 'schedule_delete', 'schedule_history'],
    files: {
      'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return {"echo": args["message"]}\n',
      'tools/danger.py': '"""\nTool: danger\nDescription: Does something that needs approval.\nTags: write\n\nInput:\n  message (str): What to do.\n"""\n\ndef execute(args):\n    return {"did": args["message"]}\n',
    },
  }));
}, 60_000);

afterAll(async () => {
  await postgres?.stop();
});

/** Sends a message the model never answers to `contextId`; resolves with its task once the turn has reached the model. */
async function hangTurn(url: string, contextId: string, send = sendMessage): Promise<{ id: string }> {
  const text = `hang ${contextId}`;
  const before = hungOn(text);
  const task = await send(url, { text, contextId }, false);
  await waitUntil(() => (hungOn(text) > before ? true : undefined), 15_000, 'the turn to reach the model');
  return task;
}

/**
 * sendMessage to a replica just started behind a relay. A message is refused before its turn starts
 * (FORGE_STATE_UNAVAILABLE) when the store does not answer a ping within 2 s, which the replica's first
 * connection, opened through the relay that this busy process serves, can miss on a loaded machine. A
 * refused message started nothing: it is sent again, as the refusal's hint tells a client to.
 */
async function sendOnceStoreAnswers(url: string, message: Parameters<typeof sendMessage>[1], blocking?: boolean): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await sendMessage(url, message, blocking);
    } catch (err) {
      if (!String(err).includes('FORGE_STATE_UNAVAILABLE') || Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let databases = 0;
const newDatabase = () => postgres.createDatabase(`fleet_${process.pid}_${++databases}`);

interface Fleet {
  proxy: RoundRobinProxy;
  replicas: AgentProcess[];
  stateUrl: string;
  start(): Promise<AgentProcess>;
  stop(): Promise<void>;
}

async function startFleet(count: number, stateUrl: string): Promise<Fleet> {
  const proxy = await startRoundRobinProxy([]);
  const start = async () => {
    const replica = await startReplica({ bundle, stateUrl, publicUrl: proxy.url });
    proxy.add(replica.url);
    return replica;
  };
  const replicas = await Promise.all(Array.from({ length: count }, start));
  await waitUntil(() => (proxy.ready().length === count ? true : undefined), 20_000, 'every replica to be ready');
  return {
    proxy,
    replicas,
    stateUrl,
    start,
    async stop() {
      await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
      await proxy.close();
    },
  };
}

/*
 * The file's blocks run side by side ({ concurrent: true }): each has its own fleet and proxy, and
 * mostly waits on timers (leases, drains, a schedule's firings), so one after the other took 65 s
 * where side by side takes the longest block's time. The tests of a fleet's block run in order
 * (it.sequential): they share its replicas, and some replace them.
 */

/** Scenarios that hold for one process on files and for many on Postgres. */
describe.each([
  { store: 'postgres', replicas: 3 },
  { store: 'file', replicas: 1 },
])('on the $store store with $replicas replica(s)', { concurrent: true }, ({ store, replicas }) => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet(replicas, store === 'postgres' ? await newDatabase() : 'file:');
  }, 60_000);
  afterAll(() => fleet?.stop());

  it.sequential('completes an A2A task paused for approval on one replica when it is approved through another', async () => {
    const [first, second] = [fleet.replicas[0], fleet.replicas.at(-1)!];
    const paused = await sendMessage(first.url, { text: 'approve-me', contextId: `approval-${store}` });
    expect(paused.status.state).toBe('input-required');
    const done = await sendMessage(second.url, { text: 'approve', contextId: `approval-${store}`, taskId: paused.id });
    expect(done.status.state).toBe('completed');
    expect(done.artifacts[0].parts[0].text).toBe('done: {"did":"boom"}');
    const seen = await getTask(fleet.replicas[1 % replicas].url, paused.id);
    expect(seen.status.state).toBe('completed');
  });

  it.sequential('keeps a message holding NUL, U+0001 and half a surrogate pair as it was sent, in its task and its conversation, on every replica', async () => {
    const contextId = `odd-text-${store}`;
    const text = 'nul \0, U+0001 \u0001 then 0, half a pair \ud800 and \udfff';
    const done = await sendMessage(fleet.replicas[0].url, { text, contextId });
    expect(done.status.state, JSON.stringify(done.status)).toBe('completed');
    expect(done.artifacts[0].parts[0].text).toBe(`ok: ${text}`);
    const last = fleet.replicas.at(-1)!;
    expect((await getTask(last.url, done.id)).history[0].parts[0].text).toBe(text);
    const count = await sendMessage(last.url, { text: 'count', contextId });
    expect(JSON.parse(count.artifacts[0].parts[0].text)).toEqual([text, 'count']);
  });

  it.sequential('refuses a message whose contextId is over 256 characters as malformed, on both protocol generations, sending and streaming, and takes one of 256 characters of any kind', async () => {
    const url = fleet.replicas[0].url;
    const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...auth } });
    const message = (text: string, contextId: string): Message => ({ messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] });
    const request = (text: string, contextId: string) => ({ tenant: '', message: message(text, contextId), configuration: undefined, metadata: undefined });
    const v1 = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(url);
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${url}/a2a`, fetchImpl: authFetch });
    const drain = async (events: AsyncIterable<unknown>) => {
      for await (const _ of events);
    };
    const tooLong = 'c'.repeat(257);
    // Its own text: the other blocks' messages reach the model meanwhile.
    const refusedText = `never for the model (${store})`;
    const refusedRequest = () => request(refusedText, tooLong);
    for (const send of [() => v1.sendMessage(refusedRequest()), () => drain(v1.sendMessageStream(refusedRequest())), () => legacy.sendMessage(refusedRequest()), () => drain(legacy.sendMessageStream(refusedRequest()))]) {
      const refused = await send().then(() => undefined, (err: any) => (err?.cause?.envelopeCode !== undefined ? err.cause : err));
      expect(refused?.envelopeCode ?? refused?.code, String(refused)).toBe(-32602);
      expect(String(refused?.message)).toContain('contextId is 257 characters long; at most 256 are taken');
    }
    expect(llm.bodies.filter((body) => JSON.stringify(body).includes(refusedText))).toEqual([]);
    // The longest id, of characters that take the most room once stored: random, so no store can compress it.
    const kinds = ['\0', '\ud800', '\udfff', '€', '😀'.slice(0, 1), 'a', '\u0001'];
    const longest = Array.from({ length: 256 }, () => kinds[Math.floor(Math.random() * kinds.length)]).join('');
    const done = await sendMessage(url, { text: 'first', contextId: longest });
    expect(done.status.state, JSON.stringify(done.status)).toBe('completed');
    const count = await sendMessage(fleet.replicas.at(-1)!.url, { text: 'count', contextId: longest });
    expect(JSON.parse(count.artifacts[0].parts[0].text)).toEqual(['first', 'count']);
  });

  it.sequential('keeps all of 50 concurrent messages to one conversation, sent through the load balancer', async () => {
    const contextId = `busy-${store}`;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => sendMessage(fleet.proxy.url, { text: `note ${i}`, contextId })));
    expect(results.map((r) => r.status.state)).toEqual(Array(50).fill('completed'));
    const count = await sendMessage(fleet.proxy.url, { text: 'count', contextId });
    const said = JSON.parse(count.artifacts[0].parts[0].text) as string[];
    expect(said.filter((t) => t.startsWith('note ')).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `note ${i}`).sort());
    if (replicas > 1) expect(fleet.proxy.served.size).toBe(replicas);
  }, 60_000);

  it.sequential('fires an @every 1s schedule once per due time, and schedule_set on one replica shows on all', async () => {
    const set = await callTool(fleet.replicas[0].url, 'schedule_set', { id: `beat-${store}`, cron: '@every 1s', task: 'tick' });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    for (const replica of fleet.replicas) {
      const listed = await callTool(replica.url, 'schedule_list', {});
      expect(JSON.stringify(listed.body)).toContain(`beat-${store}`);
    }
    // Ten seconds of firings, counted from the history every replica shares.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const deleted = await callTool(fleet.replicas.at(-1)!.url, 'schedule_delete', { id: `beat-${store}` });
    expect(deleted.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // firings under way finish and are recorded
    const history = await callTool(fleet.replicas[0].url, 'schedule_history', { id: `beat-${store}`, limit: 100 });
    const entries = history.body.value.entries as { scheduled_for: string; status: string }[];
    const dueTimes = entries.map((e) => e.scheduled_for);
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    expect(dueTimes.length).toBeGreaterThanOrEqual(6);
    expect(dueTimes.length).toBeLessThanOrEqual(12);
    expect(entries.every((e) => e.status === 'ok' || e.status === 'skipped')).toBe(true);
  }, 40_000);

  it.sequential('serves a file that file_create made on one replica from every replica', async () => {
    const made = await callTool(fleet.replicas[0].url, 'file_create', { filename: `report-${store}.md`, content: '# Report\n' });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const { url } = made.body.value as { url: string };
    for (const replica of fleet.replicas) {
      const response = await fetch(`${replica.url}${url}`, { headers: auth });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/markdown');
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report-${store}.md"`);
      expect(await response.text()).toBe('# Report\n');
    }
    expect((await fetch(`${fleet.replicas[0].url}${url}`)).status).toBe(401);
    expect((await fetch(`${fleet.replicas[0].url}/files/00000000-0000-0000-0000-000000000000`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${fleet.replicas[0].url}/files/..%2F..%2Fetc%2Fpasswd`, { headers: auth })).status).toBe(404);
  });

  it.sequential('answers MCP calls on whichever replica the load balancer picks, without a session', async () => {
    const client = new Client({ name: 'fleet-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fleet.proxy.url}/mcp`), { requestInit: { headers: auth } }));
    try {
      const before = new Map(fleet.proxy.served);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      for (let i = 0; i < 6; i++) {
        const result = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual({ echo: `m${i}` });
      }
      const used = [...fleet.proxy.served].filter(([url, n]) => n > (before.get(url) ?? 0));
      expect(used.length).toBe(replicas);
    } finally {
      await client.close();
    }
  });
});

describe('replicas on Postgres', { concurrent: true }, () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet(3, await newDatabase());
  }, 60_000);
  afterAll(() => fleet?.stop());

  it.sequential('fails the task of a replica killed mid-turn, through the lease, instead of leaving it working', async () => {
    const victim = fleet.replicas[0];
    const victimId = /state: postgres at \S+ \(this replica: ([\w-]+)\)/.exec(victim.output())?.[1];
    expect(victimId, victim.output()).toBeDefined();
    const task = await hangTurn(victim.url, 'doomed');
    await waitUntil(async () => ((await getTask(fleet.replicas[1].url, task.id)).status.state === 'working' ? true : undefined), 15_000, 'the task to be working');
    await victim.stop('SIGKILL');
    fleet.proxy.remove(victim.url);
    const failed = await waitUntil(async () => {
      const seen = await getTask(fleet.replicas[2].url, task.id);
      return seen.status.state === 'failed' ? seen : undefined;
    }, 20_000, 'the task to be failed');
    expect(failed.status.message.parts[0].text).toContain('stopped before it finished');
    // The replica that gave the task up says so, naming the task and the replica that held it.
    const said = `failed task ${task.id}: replica ${victimId} stopped renewing its lease (3000 ms) before the task finished`;
    await waitUntil(() => (fleet.replicas.slice(1).some((r) => r.output().includes(said)) ? true : undefined), 10_000, 'the warning of the replica that failed the task');
    // The conversation's hold expired with the lease: the context takes new turns.
    const next = await sendMessage(fleet.replicas[1].url, { text: 'still there?', contextId: 'doomed' });
    expect(next.status.state).toBe('completed');
    fleet.replicas.splice(0, 1, await fleet.start());
  }, 60_000);

  it.sequential('cancels a turn running on one replica when the cancel reaches another', async () => {
    const [runner, other] = fleet.replicas.slice(1, 3);
    const task = await hangTurn(runner.url, 'to-cancel');
    const response = await fetch(`${other.url}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id: task.id } }) });
    expect(((await response.json()) as any).result.status.state).toBe('canceled');
    // The turn on the first replica was aborted, so the conversation is free for the next message at once.
    const next = await sendMessage(other.url, { text: 'after the cancel', contextId: 'to-cancel' });
    expect(next.status.state).toBe('completed');
    expect((await getTask(runner.url, task.id)).status.state).toBe('canceled');
  }, 30_000);

  /**
   * A turn hung on the model on a replica whose connections to the store go through a relay (`gate`),
   * saved as working; `other` is a replica of the fleet. The runner is stopped afterwards.
   */
  async function withHungTurnBehindRelay(contextId: string, body: (turn: { gate: Awaited<ReturnType<typeof relay>>; other: AgentProcess; task: { id: string } }) => Promise<void>) {
    const gate = await relay(postgres.port);
    const runner = await startReplica({ bundle, stateUrl: fleet.stateUrl.replace(`:${postgres.port}/`, `:${gate.port}/`), publicUrl: fleet.proxy.url });
    try {
      const other = fleet.replicas[1];
      const task = await hangTurn(runner.url, contextId, sendOnceStoreAnswers);
      // Its saves of the task done: the A2A SDK stops saving a task's events after one save fails.
      await waitUntil(async () => ((await getTask(other.url, task.id)).status.state === 'working' ? true : undefined), 15_000, 'the task saved as working');
      await body({ gate, other, task });
    } finally {
      await runner.stop('SIGKILL');
      await gate.close();
    }
  }

  it.sequential('cancels a turn on a replica that never heard the cancel (its connections to the store were cut as it was sent), when it next renews the lease', async () => {
    await withHungTurnBehindRelay('cancel-unheard', async ({ gate, other, task }) => {
      // Sent while the runner has no LISTEN connection: the notification is lost to it.
      gate.down();
      const response = await fetch(`${other.url}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id: task.id } }) });
      expect(((await response.json()) as any).result.status.state).toBe('canceled');
      // Back within a lease (3 s here): the runner still holds the task, and finds the request when it renews.
      await new Promise((resolve) => setTimeout(resolve, 500));
      gate.up();
      const next = await sendMessage(other.url, { text: 'after the unheard cancel', contextId: 'cancel-unheard' });
      expect(next.status.state).toBe('completed');
      expect((await getTask(other.url, task.id)).status.state).toBe('canceled');
    });
  }, 30_000);

  it.sequential('stops a turn whose lease was reaped while its replica could not reach the store, instead of running on', async () => {
    await withHungTurnBehindRelay('lease-lost', async ({ gate, other, task }) => {
      // Cut off past its lease (3 s here): another replica reaps the lease and fails the task.
      gate.down();
      await waitUntil(async () => ((await getTask(other.url, task.id)).status.state === 'failed' ? true : undefined), 20_000, 'the task failed by another replica');
      gate.up();
      // At its next renewal the runner finds the lease gone and stops the turn, saying why.
      const stopped = await waitUntil(async () => {
        const seen = await getTask(other.url, task.id);
        return String(seen.status.message?.parts?.[0]?.text).includes('lost its connection to the state store') ? seen : undefined;
      }, 15_000, "the runner's own account");
      expect(stopped.status.state).toBe('failed');
      expect((await sendMessage(other.url, { text: 'after the lost lease', contextId: 'lease-lost' })).status.state).toBe('completed');
    });
  }, 60_000);

});

// A fleet of its own, so that these run beside the tests above rather than after them.
describe('replicas on Postgres, stopping and restarting', { concurrent: true }, () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet(3, await newDatabase());
  }, 60_000);
  afterAll(() => fleet?.stop());

  it.sequential('finishes a turn that ends while its replica cannot reach the store: its task and conversation are saved when the store is back', async () => {
    const gate = await relay(postgres.port);
    // A lease longer than the outage: the fleet does not give the task up meanwhile.
    const runner = await startReplica({ bundle, stateUrl: fleet.stateUrl.replace(`:${postgres.port}/`, `:${gate.port}/`), publicUrl: fleet.proxy.url, env: { FORGE_LEASE: '30s' } });
    try {
      const other = fleet.replicas[1];
      const before = held;
      const task = await sendOnceStoreAnswers(runner.url, { text: 'hold-then-echo', contextId: 'away-at-the-end' }, false);
      await waitUntil(() => (held > before ? true : undefined), 15_000, 'the turn to reach the model');
      await waitUntil(async () => ((await getTask(other.url, task.id)).status.state === 'working' ? true : undefined), 15_000, 'the task saved as working');
      gate.down();
      // The tool call, its result and the answer all come while the store is away, for longer than the
      // 3 s a statement is tried again for.
      letHeldAnswerGo!();
      await new Promise((resolve) => setTimeout(resolve, 4000));
      gate.up();
      const done = await waitUntil(async () => {
        const seen = await getTask(other.url, task.id);
        return seen.status.state === 'completed' ? seen : undefined;
      }, 20_000, 'the task saved as completed');
      expect(done.status.message.parts[0].text).toContain('while away');
      // The turn's messages were saved too: the conversation goes on from them.
      const next = await sendMessage(other.url, { text: 'count', contextId: 'away-at-the-end' });
      expect(JSON.parse(next.status.message.parts[0].text)).toEqual(['hold-then-echo', 'count']);
    } finally {
      await runner.stop('SIGKILL');
      await gate.close();
    }
  }, 60_000);

  it.sequential('fails a turn still running when the shutdown grace period ends, instead of leaving it working', async () => {
    const replica = await startReplica({ bundle, stateUrl: fleet.stateUrl, publicUrl: fleet.proxy.url, env: { FORGE_SHUTDOWN_GRACE: '1s', FORGE_DRAIN_DELAY: '100ms' } });
    const task = await hangTurn(replica.url, 'shutdown');
    expect(await replica.stop('SIGTERM')).toBe(0);
    const seen = await getTask(fleet.replicas[0].url, task.id);
    expect(seen.status.state).toBe('failed');
    expect(seen.status.message.parts[0].text).toContain('stopped before the task finished');
    expect((await sendMessage(fleet.replicas[0].url, { text: 'next', contextId: 'shutdown' })).status.state).toBe('completed');
  }, 30_000);

  it.sequential('loses no request of 32 concurrent clients during a rolling restart', async () => {
    let running = true;
    const outcomes = { ok: 0, failed: [] as string[] };
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        try {
          const { status, body } = await callTool(fleet.proxy.url, 'echo', { message: `${n}-${i}` });
          if (status === 200 && body.value?.echo === `${n}-${i}`) outcomes.ok++;
          else outcomes.failed.push(`${status} ${JSON.stringify(body)}`);
        } catch (err) {
          outcomes.failed.push(String(err));
        }
      }
    };
    const clients = Array.from({ length: 32 }, (_, n) => client(n));
    for (let i = 0; i < fleet.replicas.length; i++) {
      const old = fleet.replicas[i];
      const replacement = await fleet.start();
      await waitUntil(() => (fleet.proxy.ready().includes(replacement.url) ? true : undefined), 20_000, 'the replacement to be ready');
      const exitCode = await old.stop('SIGTERM');
      expect(exitCode).toBe(0);
      expect(old.output()).toContain('draining for 2000 ms');
      fleet.proxy.remove(old.url);
      fleet.replicas[i] = replacement;
    }
    running = false;
    await Promise.all(clients);
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.ok).toBeGreaterThan(100);
  }, 90_000);

  it.sequential('advertises the service address in the agent card, not the pod', async () => {
    const card = (await (await fetch(`${fleet.replicas[0].url}/.well-known/agent.json`)).json()) as { url: string };
    expect(card.url).toBe(`${fleet.proxy.url}/a2a`);
  });
});

// Each test here starts and stops what it needs: they run side by side too.
describe('starting a replica on a shared store', { concurrent: true }, () => {
  const serve = (env: NodeJS.ProcessEnv) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: '', ...env } });

  it('refuses to generate a token per replica', async () => {
    const result = await serve({ FORGE_STATE_URL: await newDatabase(), FORGE_PUBLIC_URL: 'http://agent.example' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('needs one token for every replica: set FORGE_AUTH_TOKEN or FORGE_AUTH_TOKEN_FILE');
  });

  it('requires FORGE_PUBLIC_URL', async () => {
    const result = await serve({ FORGE_STATE_URL: await newDatabase(), FORGE_AUTH_TOKEN: FLEET_TOKEN });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('needs FORGE_PUBLIC_URL');
  });

  it('takes the token from FORGE_AUTH_TOKEN_FILE', async () => {
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'token'), 'from-a-file\n');
    const proxy = await startRoundRobinProxy([]);
    const replica = await startReplica({ bundle, stateUrl: await newDatabase(), publicUrl: proxy.url, env: { FORGE_AUTH_TOKEN: '', FORGE_AUTH_TOKEN_FILE: join(dir, 'token') } });
    try {
      expect((await fetch(`${replica.url}/tools`, { headers: { authorization: 'Bearer from-a-file' } })).status).toBe(200);
      expect((await fetch(`${replica.url}/tools`, { headers: auth })).status).toBe(401);
    } finally {
      await replica.stop('SIGKILL');
      await proxy.close();
    }
  });

  it('turns unready only after repeated failures to reach the store', async () => {
    const own = await startPostgres();
    const proxy = await startRoundRobinProxy([]);
    const replica = await startReplica({ bundle, stateUrl: await own.createDatabase('readiness'), publicUrl: proxy.url });
    try {
      expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);
      await own.stop();
      const statuses: number[] = [];
      while (statuses.at(-1) !== 503 && statuses.length < 10) statuses.push((await fetch(`${replica.url}/readyz`)).status);
      expect(statuses).toEqual([200, 200, 503]);
      const body = (await (await fetch(`${replica.url}/readyz`)).json()) as { reason: string };
      expect(body.reason).toMatch(/^the state store failed \d+ checks in a row/);
      expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
    } finally {
      await replica.stop('SIGKILL');
      await proxy.close();
    }
  }, 30_000);

  it('says at start which store it uses, without the password', async () => {
    const url = (await newDatabase()).replace('postgres://postgres@', 'postgres://postgres:s3cret@');
    const proxy = await startRoundRobinProxy([]);
    const replica = await startReplica({ bundle, stateUrl: url, publicUrl: proxy.url });
    try {
      expect(replica.output()).toMatch(/state: postgres at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/fleet_\d+_\d+ \(this replica: [\w-]+\)/);
      expect(replica.output()).not.toContain('s3cret');
    } finally {
      await replica.stop('SIGKILL');
      await proxy.close();
    }
  });

  it('says which store it cannot reach, without the password', async () => {
    const result = await serve({ FORGE_STATE_URL: `postgres://someone:s3cret@127.0.0.1:1/nothing`, FORGE_AUTH_TOKEN: FLEET_TOKEN, FORGE_PUBLIC_URL: 'http://agent.example' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot open the Postgres state store at postgres://someone:***@127.0.0.1:1/nothing');
    expect(result.stderr).not.toContain('s3cret');
  });
});
