/**
 * The state store (a real PostgreSQL, through a relay the test cuts) goes
 * away in the middle of an A2A message: after the store guard's ping passed,
 * while the turn runs. The model's second request is the moment: the turn
 * has taken its lease and saved its task by then (a tool call came between),
 * and the scripted model server cuts the relay before it answers, so the
 * turn cannot write its conversation. The task store keeps the task's states
 * meanwhile (postgres-tasks.ts), so no error reaches the SDK: it answers the
 * turn's end as a result, the task failed (with the driver's words, before the
 * executor told the store guard). The SDK's own clients, v1.0 and v0.3, over
 * message/send and message/stream, see FORGE_STATE_UNAVAILABLE with a hint to
 * retry instead; the task, saved failed once the store is back, says so
 * without the driver's words.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { freePort } from '../../helpers/free-port.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../../helpers/scripted-llm.ts';
import { relay } from '../../helpers/tcp-relay.ts';

const TOKEN = 'drop-token-123';
let postgres: TestPostgres;
let databases = 0;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);

afterAll(async () => {
  await postgres?.stop();
});

interface Running {
  agent: RunningAgent;
  store: PostgresStateStore;
  /** A connection of the test's own, not through the relay. */
  direct: pg.Client;
  gate: Awaited<ReturnType<typeof relay>>;
  llm: ScriptedServer;
  warnings: string[];
  /** The calls of the tool `lookup`. */
  looked: number;
}
const running: Running[] = [];

afterEach(async () => {
  for (const { agent, store, direct, gate } of running.splice(0)) {
    gate.up();
    await agent.stop(100);
    await store.close().catch(() => {});
    await direct.end();
    await gate.close();
  }
});

type Script = Parameters<typeof startScriptedOpenAI>[0];

/**
 * An agent on a Postgres store reached through a relay that the model's second request cuts, or that
 * `script` (given the relay) cuts; `lookup` counts its calls in `looked`.
 */
async function startAgent(script?: (gate: Running['gate']) => Script): Promise<Running> {
  // A database of its own: the task the test waits for is the only one there.
  const database = await postgres.createDatabase(`drop_${process.pid}_${++databases}`);
  const direct = new pg.Client({ connectionString: database });
  await direct.connect();
  const gate = await relay(postgres.port);
  const llm = await startScriptedOpenAI(script?.(gate) ?? [
    { toolCalls: [{ name: 'lookup', arguments: {} }] },
    // The store away from here on: the turn was let in (the ping passed) and is under way.
    async () => {
      // The SDK saves the task's events after the executor publishes them, behind it: the cut waits until
      // the tool's result is saved, so that what finds the store away is the turn (its conversation's
      // save), not the SDK catching up with the task's first events.
      await waitUntil(async () => ((await direct.query("SELECT 1 FROM forge_tasks WHERE data::text LIKE '%toolResult%'")).rowCount ? true : undefined), 20_000, 'the tool result saved');
      gate.down();
      return { text: 'an answer the store never keeps' };
    },
  ]);
  const started = { looked: 0 } as Running;
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'lookup', description: 'lookup tool', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => (started.looked++, ok({ population: 709000 })) }, 'test');
  const warnings: string[] = [];
  const log = { debug() {}, info() {}, warn: (line: string) => void warnings.push(line) };
  // A short lease: the conversation's save tries again for as long as one lasts before it gives up.
  const store = await openPostgresStore({ url: database.replace(`:${postgres.port}/`, `:${gate.port}/`), leaseMs: 3000, log, connectTimeoutMs: 2000 });
  const manifest = { agent_id: 'drop-test', version: '1.0.0', description: 'An agent whose store goes away mid-turn.', tools: registry.list(), model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
  // The card names the agent itself, so that the SDK's client finds the endpoint from it.
  const port = await freePort();
  const agent = await serveAgent({
    manifest, registry, workDir: tempDir(), host: '127.0.0.1', port, http: new HttpClient(), log,
    env: { FORGE_AUTH_TOKEN: TOKEN }, publicUrl: `http://127.0.0.1:${port}`, state: store,
  });
  Object.assign(started, { agent, store, direct, gate, llm, warnings });
  running.push(started);
  return started;
}

const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });

function userMessage(text: string): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}
const send = (message: Message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function v1Client(url: string) {
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(url);
}

/** What a client error says: its JSON-RPC code and data (the SSE path wraps it in `cause`). */
function rpcError(err: any): { code: unknown; data: any } {
  const inner = err?.cause && err.cause.envelopeCode !== undefined ? err.cause : err;
  return { code: inner?.envelopeCode ?? inner?.code, data: inner?.data };
}

const UNAVAILABLE = { code: -32000, data: { code: 'FORGE_STATE_UNAVAILABLE', hint: expect.stringContaining('retry') } };

/** The task's state as it lands once the store is back (its states were kept meanwhile): its status's text. */
async function landedFailed({ gate, direct }: Running): Promise<string> {
  gate.up();
  const row = await waitUntil(async () => (await direct.query<{ state: number; data: any }>('SELECT state, data FROM forge_tasks')).rows.find((r) => r.state === TaskState.TASK_STATE_FAILED), 20_000, 'the failed task saved');
  return JSON.stringify(row.data.status);
}

/** What a stream's events were, by kind (and a status update's state). */
const kinds = (events: any[]) => events.map((e) => e.payload?.$case === 'statusUpdate' ? `status ${e.payload.value.status.state}` : e.payload?.$case);

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  let result: unknown;
  try {
    result = await run();
  } catch (err) {
    return err;
  }
  return new Error(`the request succeeded, with the store away: ${JSON.stringify(result)}`);
}

describe('the state store goes away in the middle of an A2A message', () => {
  it('message/send (v0.3) answers FORGE_STATE_UNAVAILABLE', async () => {
    const started = await startAgent();
    const { agent, llm, warnings } = started;
    const transport = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
    const err = await failure(() => transport.sendMessage(send(userMessage('hi'))));
    expect(llm.bodies).toHaveLength(2);
    expect(rpcError(err), String(err)).toMatchObject(UNAVAILABLE);
    // The driver's line is in the log, once; the task, failed, says what happened without it.
    expect(warnings.filter((line) => line.startsWith('a2a: '))).toEqual([expect.stringMatching(/^a2a: message\/send answered FORGE_STATE_UNAVAILABLE: the state store cannot be reached \(.+\)$/)]);
    const status = await landedFailed(started);
    expect(status).toContain('the state store could not be reached during this turn; send it again');
    expect(status).not.toMatch(/ECONNRESET|Connection terminated/);
  }, 60_000);

  it('SendMessage (v1.0) answers FORGE_STATE_UNAVAILABLE', async () => {
    const { agent, llm } = await startAgent();
    const client = await v1Client(agent.url);
    const err = await failure(() => client.sendMessage(send(userMessage('hi'))));
    expect(llm.bodies).toHaveLength(2);
    expect(rpcError(err), String(err)).toMatchObject(UNAVAILABLE);
  }, 60_000);

  /** A streamed turn that loses the store: its events up to the loss come through, and the failed status is answered as the error. */
  async function expectStreamUnavailable(llm: { bodies: unknown[] }, stream: () => AsyncIterable<unknown>) {
    const events: unknown[] = [];
    const err = await failure(async () => {
      for await (const event of stream()) events.push(event);
    });
    expect(llm.bodies).toHaveLength(2);
    expect(rpcError(err), `${err} after ${JSON.stringify(events)}`).toMatchObject(UNAVAILABLE);
    expect(kinds(events).slice(0, 2)).toEqual(['task', `status ${TaskState.TASK_STATE_WORKING}`]);
    expect(kinds(events)).not.toContain(`status ${TaskState.TASK_STATE_FAILED}`);
  }

  it('message/stream (v0.3) ends with FORGE_STATE_UNAVAILABLE', async () => {
    const { agent, llm } = await startAgent();
    const transport = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
    await expectStreamUnavailable(llm, () => transport.sendMessageStream(send(userMessage('hi'))));
  }, 60_000);

  it('SendStreamingMessage (v1.0) ends with FORGE_STATE_UNAVAILABLE', async () => {
    const { agent, llm } = await startAgent();
    const client = await v1Client(agent.url);
    await expectStreamUnavailable(llm, () => client.sendMessageStream(send(userMessage('hi'))));
  }, 60_000);
});

describe("the state store goes away before the SDK's first load of a new task, after its turn took the lease", () => {
  /**
   * The SDK loads a task before applying each of its events, the first one too, and that load races the
   * turn: here it is held back (a hook on the task store) until the model's first request has cut the relay.
   * The turn's lease was taken by then, and found no task (none was saved yet), so the load, with the store
   * away, has no state of the task to answer from. The store is back once that load has settled, and the
   * model's answer runs the tool `lookup`: a turn the SDK gave up on would run it with no one listening,
   * after its client was told to send the message again.
   */
  async function startRacing() {
    // Its promise in an object: a promise resolved with a promise would take on its outcome.
    let loadSeen!: (load: { settled: Promise<unknown> }) => void;
    const firstLoad = new Promise<{ settled: Promise<unknown> }>((resolve) => (loadSeen = resolve));
    let cut!: () => void;
    const relayCut = new Promise<void>((resolve) => (cut = resolve));
    const started = await startAgent((gate) => [
      async () => {
        gate.down();
        cut();
        await (await firstLoad).settled;
        gate.up();
        return { toolCalls: [{ name: 'lookup', arguments: {} }] };
      },
      { text: 'the answer' },
    ]);
    const tasks = started.store.tasks;
    const load = tasks.load.bind(tasks);
    let hooked = false;
    tasks.load = (taskId, context) => {
      if (hooked) return load(taskId, context);
      hooked = true;
      const loading = relayCut.then(() => load(taskId, context));
      loadSeen({ settled: loading.catch(() => {}) });
      return loading;
    };
    return started;
  }

  /** The task as it lands in the store: completed, once the turn's states reach it. */
  const landedCompleted = ({ direct }: Running) =>
    waitUntil(async () => (await direct.query<{ state: number }>('SELECT state FROM forge_tasks')).rows.find((r) => r.state === TaskState.TASK_STATE_COMPLETED), 20_000, 'the completed task saved');

  it('message/send (v0.3) answers the turn, which ran lookup once, and the task lands completed', async () => {
    const started = await startRacing();
    const transport = new LegacyJsonRpcTransport({ endpoint: `${started.agent.url}/a2a`, fetchImpl: authFetch });
    const outcome: any = await transport.sendMessage(send(userMessage('hi'))).then(
      (result) => ({ result, looked: started.looked }),
      (err) => ({ error: rpcError(err), looked: started.looked }),
    );
    // Told to send it again, the client would run lookup twice: the turn must not go on after that.
    await waitUntil(() => (started.llm.bodies.length === 2 ? true : undefined), 20_000, 'the turn to end').catch(() => {});
    expect({ ...outcome, lookedByNow: started.looked }).toMatchObject({ result: { status: { state: TaskState.TASK_STATE_COMPLETED } }, looked: 1, lookedByNow: 1 });
    await landedCompleted(started);
  }, 60_000);

  it('SendStreamingMessage (v1.0) streams the turn to its completed end, which ran lookup once', async () => {
    const started = await startRacing();
    const client = await v1Client(started.agent.url);
    const events: any[] = [];
    let error: unknown;
    try {
      for await (const event of client.sendMessageStream(send(userMessage('hi')))) events.push(event);
    } catch (err) {
      error = err;
    }
    const looked = started.looked;
    await waitUntil(() => (started.llm.bodies.length === 2 ? true : undefined), 20_000, 'the turn to end').catch(() => {});
    expect(error && rpcError(error)).toBeUndefined();
    expect(kinds(events).at(-1)).toBe(`status ${TaskState.TASK_STATE_COMPLETED}`);
    expect({ looked, lookedByNow: started.looked }).toEqual({ looked: 1, lookedByNow: 1 });
    await landedCompleted(started);
  }, 60_000);
});
