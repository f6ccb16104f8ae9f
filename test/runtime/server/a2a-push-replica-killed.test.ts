/**
 * A task's final state reaches its webhook when the replica that ran the
 * task is killed (SIGKILL: no drain, no last try) after the task finished
 * but before its webhook took the final state: another replica, a real
 * bundle process on the same PostgreSQL, finds it unsettled in the store
 * and sends it. The webhook holds every request until the first replica is
 * dead, so that replica's notifications never land.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AgentProcess } from '../../helpers/agent-process.ts';
import { auth, getTask, startReplica, waitUntil } from '../../helpers/fleet.ts';
import { startServer, type TestServer } from '../../helpers/http-server.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { deployBundle, forge, minimalConfig, writeProject } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const HOOK_TOKEN = 'hook-token-for-the-kill';

let postgres: TestPostgres;
let webhook: TestServer;
let bundle: string;
/** While true, the webhook answers nothing: what it gets stays unanswered. */
let holding = true;
const held: ServerResponse[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  webhook = await startServer((_req, res) => {
    if (holding) held.push(res);
    else res.end();
  });
  const llm = await startScriptedOpenAI([{ text: 'finished before its replica died' }]);
  const project = writeProject({
    'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\negress:\n  mode: allowlist\n  allowed_domains: []\n  allowed_addresses: ["127.0.0.1:${webhook.port}"]\n`),
  });
  const built = await forge(['build', '--prod'], project);
  if (built.code !== 0) throw new Error(`the bundle did not build:\n${built.stdout}${built.stderr}`);
  bundle = deployBundle(project).bundle;
}, 120_000);

afterAll(async () => {
  await postgres?.stop();
});

/** The task states the webhook got (each v0.3 notification is the whole task), from request `from` on. */
const statesFrom = (from: number) => webhook.requests.slice(from).map((r) => (JSON.parse(r.body) as { status?: { state?: string } }).status?.state);

it("sends a task's final state from another replica when the one that ran the task was killed before its webhook took it", async () => {
  const stateUrl = await postgres.createDatabase(`push_killed_${process.pid}`);
  const env = { OPENAI_API_KEY: 'sk-test' };
  const replicas: AgentProcess[] = [];
  const sql = new pg.Client({ connectionString: stateUrl });
  try {
    const runner = await startReplica({ bundle, stateUrl, publicUrl: 'http://127.0.0.1:9', env });
    replicas.push(runner);
    const other = await startReplica({ bundle, stateUrl, publicUrl: 'http://127.0.0.1:9', env });
    replicas.push(other);

    const response = await fetch(`${runner.url}/a2a`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'message/send',
        params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'finish, then die' }] }, configuration: { blocking: false, pushNotificationConfig: { url: `${webhook.url}/hook`, token: HOOK_TOKEN } } },
      }),
    });
    const { result: task } = (await response.json()) as { result: { id: string } };
    // Finished in the store (as the other replica reads it), its notifications held at the webhook, unanswered.
    await waitUntil(async () => ((await getTask(other.url, task.id)).status.state === 'completed' ? true : undefined), 20_000, 'the task to finish');
    await waitUntil(() => (held.length > 0 ? true : undefined), 20_000, "the runner's first notification to reach the webhook");
    // Killed, not stopped: it had no time to try anything more.
    expect(await runner.stop('SIGKILL')).toBeNull();
    holding = false;
    const sentBeforeTheKill = webhook.requests.length;

    // The grace the runner had to send it (a minute after the task finished) has passed.
    await sql.connect();
    await sql.query("UPDATE forge_tasks SET updated_at = now() - interval '2 minutes' WHERE id = $1", [task.id]);
    // The other replica looks every 30 s.
    await other.waitFor(new RegExp(`push notification of task ${task.id}'s final state to .* sent, on try 1 from the store`), 60_000);
    expect(statesFrom(sentBeforeTheKill)).toContain('completed');
    const delivered = webhook.requests.slice(sentBeforeTheKill).find((r) => JSON.parse(r.body).status?.state === 'completed')!;
    expect(JSON.parse(delivered.body)).toMatchObject({ kind: 'task', id: task.id, artifacts: [{ parts: [{ text: 'finished before its replica died' }] }] });
    expect(delivered.headers['x-a2a-notification-token']).toBe(HOOK_TOKEN);
    // Noted in the store just after the line above: no replica sends it again.
    await waitUntil(async () => ((await sql.query('SELECT final_settled FROM forge_push_configs WHERE task_id = $1', [task.id])).rows[0]?.final_settled ? true : undefined), 20_000, 'the final state to be noted as taken');
  } finally {
    await sql.end().catch(() => {});
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
  }
}, 150_000);
