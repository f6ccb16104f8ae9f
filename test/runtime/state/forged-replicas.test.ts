/**
 * Forged tools on replicas sharing a real PostgreSQL: a tool forged on one
 * replica is served by the others — an agent-tier tool to every caller, a
 * session-tier tool to its own A2A conversation and to no other — and
 * forge_tool's calls_per_minute counts a session's calls on every replica;
 * a tool removed from the store (`forge tool forged remove`, `forge tool
 * promote`) goes from every replica, and does not come back from a
 * replica's own disk. Each replica has its own empty work dir, as a pod has.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../../helpers/agent-process.ts';
import { auth, callTool, sendMessage, startReplica, waitUntil } from '../../helpers/fleet.ts';
import { addNumbers, calcJson } from '../../helpers/forge-requests.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { ForgedStore, forgedRoot } from '../../../runtime/tools/emergent/forged-store.ts';
import { deployBundle, forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../../helpers/scripted-llm.ts';

let postgres: TestPostgres;
let llm: ScriptedServer;
let replicas: AgentProcess[] = [];
let project: string;
let bundle: string;
let stateUrl: string;

/**
 * The model: "forge <json>" forges that request for the conversation,
 * "call <name> <json>" calls a tool, "tools" answers with the tools it was given.
 */
function model(body: Record<string, any>) {
  const last = body.messages.at(-1);
  if (last.role === 'tool') return { text: `result: ${last.content}` };
  const text = String(last.content);
  if (text === 'tools') return { text: JSON.stringify(body.tools.map((t: any) => t.function.name).sort()) };
  const [verb, rest] = [text.slice(0, text.indexOf(' ')), text.slice(text.indexOf(' ') + 1)];
  if (verb === 'forge') return { toolCalls: [{ name: 'forge_tool', arguments: JSON.parse(rest) }] };
  if (verb === 'call') return { toolCalls: [{ name: rest.slice(0, rest.indexOf(' ')), arguments: JSON.parse(rest.slice(rest.indexOf(' ') + 1)) }] };
  return { text: `ok: ${text}` };
}

const answer = (task: any) => String(task.artifacts?.[0]?.parts?.[0]?.text ?? task.status?.message?.parts?.[0]?.text);
const renamed = (request: Record<string, unknown>, name: string, scope: 'session' | 'agent') => ({ ...request, name, scope });
/** Asks `replica`'s scripted model, in conversation `contextId`, to forge `tool` as `name` for that session; the agent's answer. */
const forgeForSession = async (replica: { url: string }, tool: Parameters<typeof renamed>[0], name: string, contextId: string) =>
  answer(await sendMessage(replica.url, { text: `forge ${JSON.stringify(renamed(tool, name, 'session'))}`, contextId }));

beforeAll(async () => {
  [postgres, llm] = await Promise.all([startPostgres(), startScriptedOpenAI(Array.from({ length: 10_000 }, () => model))]);
  project = writeProject({
    'forge.yaml': minimalConfig(
      `model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\n` +
        'tools: [math_calculate, json_parse]\n' +
        'emergent: { allow_agent_scope: true, timeout: 5, calls_per_minute: 4 }\n' +
        'approval:\n  auto_approve: ["tag:read", "name:forge_tool"]\n',
    ),
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  ({ bundle } = deployBundle(project));
  stateUrl = await postgres.createDatabase(`forged_${process.pid}`);
  replicas = await Promise.all([0, 1].map(() => startReplica({ bundle, stateUrl, publicUrl: 'http://agent.invalid' })));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(replicas.map((r) => r.stop('SIGKILL')));
  await postgres?.stop();
});

/**
 * How a replica's look at the store's forged tools is held back: the removals table it reads locked, or away (the
 * look fails; held until the replica says so, however long its start takes on a loaded machine).
 */
const HOLD_BACK: Record<'slow' | 'failing', { away: string[]; back: string[]; until?: RegExp }> = {
  slow: { away: ['BEGIN', 'LOCK TABLE forge_forged_removals IN ACCESS EXCLUSIVE MODE'], back: ['COMMIT'] },
  failing: { away: ['ALTER TABLE forge_forged_removals RENAME TO forge_forged_removals_away'], back: ['ALTER TABLE forge_forged_removals_away RENAME TO forge_forged_removals'], until: /forged tools: cannot read the state store/ },
};

/**
 * Starts a replica on `workDir` with its look at the store's forged tools held back (3 s, or until it says
 * its look failed), and gives
 * `check` the replica if it answers meanwhile: what it serves before a look comes from its own disk
 * alone. Resolves to the replica once it answers.
 */
async function startWithLookHeldBack(workDir: string, how: keyof typeof HOLD_BACK, check: (replica: AgentProcess) => Promise<void>): Promise<AgentProcess> {
  const admin = new pg.Client({ connectionString: stateUrl });
  await admin.connect();
  let starting: Promise<AgentProcess> | undefined;
  try {
    for (const sql of HOLD_BACK[how].away) await admin.query(sql);
    const { until } = HOLD_BACK[how];
    let said: () => void = () => {};
    const saidIt = new Promise<void>((resolve) => (said = resolve));
    starting = startReplica({ bundle, stateUrl, publicUrl: 'http://agent.invalid', workDir, onOutput: (output) => void (until?.test(output) && said()) });
    starting.catch(() => {});
    const early = await Promise.race([starting, (until ? Promise.race([saidIt, sleep(30_000)]) : sleep(3_000)).then(() => undefined)]);
    if (early) await check(early);
  } finally {
    for (const sql of HOLD_BACK[how].back) await admin.query(sql);
    await admin.end();
  }
  return starting;
}

describe('forged tools on two replicas sharing Postgres', () => {
  it('serves an agent-tier tool forged on one replica from the other, to every caller', async () => {
    const [a, b] = replicas;
    const forged = await callTool(a.url, 'forge_tool', renamed(addNumbers, 'add_fleet', 'agent'));
    expect(forged.body.value, JSON.stringify(forged.body)).toMatchObject({ success: true, tier: 'agent' });
    // At once, by name (looked up in the store if B has not heard of it yet).
    const called = await callTool(b.url, 'add_fleet', { a: 40, b: 2 });
    expect(called.body.value).toEqual({ sum: 42 });
    // And listed, for REST and for any conversation's model.
    const listed = await (await fetch(`${b.url}/tools`, { headers: auth })).json();
    expect(JSON.stringify(listed)).toContain('add_fleet');
    expect(JSON.parse(answer(await sendMessage(b.url, { text: 'tools', contextId: 'anyone' })))).toContain('add_fleet');
  }, 60_000);

  it('serves a session-tier tool to its conversation on the other replica, and to no other conversation there', async () => {
    const [a, b] = replicas;
    expect(await forgeForSession(a, calcJson, 'calc_mine', 'owner')).toContain('"success":true');
    expect(answer(await sendMessage(b.url, { text: 'call calc_mine {"expression":"6*7"}', contextId: 'owner' }))).toBe('result: {"result":42}');
    expect(JSON.parse(answer(await sendMessage(b.url, { text: 'tools', contextId: 'owner' })))).toContain('calc_mine');

    const other = answer(await sendMessage(b.url, { text: 'call calc_mine {"expression":"6*7"}', contextId: 'stranger' }));
    expect(other).toContain('FORGE_TOOL_UNKNOWN');
    expect(JSON.parse(answer(await sendMessage(b.url, { text: 'tools', contextId: 'stranger' })))).not.toContain('calc_mine');
    expect((await callTool(b.url, 'calc_mine', { expression: '1+1' })).body.error.code).toBe('FORGE_TOOL_UNKNOWN');
  }, 60_000);

  it('serves a sandboxed session tool forged on one replica from the other (its code written there)', async () => {
    const [a, b] = replicas;
    expect(await forgeForSession(b, addNumbers, 'add_mine', 'coder')).toContain('"success":true');
    expect(answer(await sendMessage(a.url, { text: 'call add_mine {"a":1,"b":41}', contextId: 'coder' }))).toBe('result: {"sum":42}');
  }, 60_000);

  it('registers one of two tools of one name forged on both replicas at once, and refuses the other', async () => {
    const [a, b] = replicas;
    const both = await Promise.all(
      [a, b].map((replica, i) => forgeForSession(replica, addNumbers, 'add_race', `race-${i}`)),
    );
    expect(both.filter((r) => r.includes('"success":true'))).toHaveLength(1);
    expect(both.filter((r) => r.includes('FORGE_TOOL_COLLISION'))).toHaveLength(1);
    const winner = both.findIndex((r) => r.includes('"success":true'));
    for (const replica of [a, b]) {
      expect(answer(await sendMessage(replica.url, { text: 'call add_race {"a":2,"b":3}', contextId: `race-${winner}` }))).toBe('result: {"sum":5}');
      expect(answer(await sendMessage(replica.url, { text: 'call add_race {"a":2,"b":3}', contextId: `race-${1 - winner}` }))).toContain('FORGE_TOOL_UNKNOWN');
    }
  }, 60_000);

  it('takes a tool removed from the shared store away from every replica and from a replica restarted on its old disk, and serves the name forged anew everywhere', async () => {
    const [a, b] = replicas;
    const described = async (url: string, name: string) => {
      const res = await fetch(`${url}/tools/${name}`, { headers: auth });
      return res.ok ? String(((await res.json()) as any).description) : `HTTP ${res.status}`;
    };
    const forged = await callTool(a.url, 'forge_tool', renamed(addNumbers, 'add_gone', 'agent'));
    expect(forged.body.value, JSON.stringify(forged.body)).toMatchObject({ success: true });
    // A third replica registers it, then stops: its disk keeps the tool's copy. It also keeps a tool the store never
    // held (forged before the store was shared), which it alone serves.
    const thirdDir = tempDir('forge-replica-');
    const third = await startReplica({ bundle, stateUrl, publicUrl: 'http://agent.invalid', workDir: thirdDir });
    expect((await callTool(third.url, 'add_gone', { a: 1, b: 1 })).body.value).toEqual({ sum: 2 });
    await third.stop('SIGKILL');
    const thirdStore = new ForgedStore(forgedRoot(thirdDir));
    const first = thirdStore.load('add_gone')!;
    thirdStore.save({ ...first, request: { ...first.request, name: 'only_here', description: 'Kept by one replica.' }, forgedAt: '2026-01-01T00:00:00.000Z' });

    const removed = await forge(['tool', 'forged', 'remove', 'add_gone', '--workdir', tempDir()], project, { FORGE_STATE_URL: stateUrl });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('removed forged tool add_gone from the shared state store');
    for (const replica of [a, b]) {
      await waitUntil(async () => ((await callTool(replica.url, 'add_gone', { a: 1, b: 1 })).body.error?.code === 'FORGE_TOOL_UNKNOWN' ? true : undefined), 15_000, `add_gone gone from ${replica.url}`);
      expect(JSON.stringify(await (await fetch(`${replica.url}/tools`, { headers: auth })).json())).not.toContain('add_gone');
    }
    // Restarted on its old disk: from its first answer on, it serves the removed tool to no one.
    const gone = async (replica: AgentProcess) => {
      expect((await callTool(replica.url, 'add_gone', { a: 1, b: 1 })).body.error?.code).toBe('FORGE_TOOL_UNKNOWN');
      expect(JSON.stringify(await (await fetch(`${replica.url}/tools`, { headers: auth })).json())).not.toContain('add_gone');
    };
    let restarted = await startWithLookHeldBack(thirdDir, 'slow', gone);
    try {
      await gone(restarted);
      await waitUntil(() => (existsSync(join(thirdDir, '.forge', 'forged', 'add_gone')) ? undefined : true), 5_000, 'its copy deleted');
      expect(await described(restarted.url, 'only_here')).toBe('Kept by one replica.');
    } finally {
      await restarted.stop('SIGKILL');
    }

    // Forged anew (another version of the name): every replica serves the new one, and one restarted with a forge
    // of the name the store never held on its disk takes the store's.
    const again = await callTool(b.url, 'forge_tool', { ...renamed(addNumbers, 'add_gone', 'agent'), description: 'Add two numbers, again.' });
    expect(again.body.value, JSON.stringify(again.body)).toMatchObject({ success: true });
    for (const replica of [a, b]) await waitUntil(async () => ((await described(replica.url, 'add_gone')) === 'Add two numbers, again.' ? true : undefined), 15_000, `the new add_gone on ${replica.url}`);
    thirdStore.save({ ...first, forgedAt: '2026-01-02T00:00:00.000Z' });
    const storeVersion = async (replica: AgentProcess) => {
      expect(await described(replica.url, 'add_gone')).not.toBe('Add two numbers.');
    };
    restarted = await startWithLookHeldBack(thirdDir, 'slow', storeVersion);
    try {
      expect(await described(restarted.url, 'add_gone')).toBe('Add two numbers, again.');
    } finally {
      await restarted.stop('SIGKILL');
    }
  }, 90_000);

  it('looks at the store again when its first look fails, and answers no one before a look succeeds', async () => {
    // Forged from a conversation (its own calls_per_minute, not the REST callers' the other tests use), for the whole agent.
    expect(answer(await sendMessage(replicas[0].url, { text: `forge ${JSON.stringify(renamed(addNumbers, 'add_flaky', 'agent'))}`, contextId: 'flaky' }))).toContain('"success":true');
    const dir = tempDir('forge-replica-');
    const holder = await startReplica({ bundle, stateUrl, publicUrl: 'http://agent.invalid', workDir: dir });
    expect((await callTool(holder.url, 'add_flaky', { a: 1, b: 2 })).body.value).toEqual({ sum: 3 });
    await holder.stop('SIGKILL');
    const removed = await forge(['tool', 'forged', 'remove', 'add_flaky', '--workdir', tempDir()], project, { FORGE_STATE_URL: stateUrl });
    expect(removed.code, removed.stderr).toBe(0);

    // Restarted on that disk while its looks fail (the table they read is away), then the table comes back.
    const gone = async (replica: AgentProcess) => {
      expect((await callTool(replica.url, 'add_flaky', { a: 1, b: 2 })).body.error?.code).toBe('FORGE_TOOL_UNKNOWN');
    };
    const restarted = await startWithLookHeldBack(dir, 'failing', gone);
    try {
      await gone(restarted);
      expect(restarted.output()).toMatch(/forged tools: cannot read the state store: .*; looking again in 1 s/);
    } finally {
      await restarted.stop('SIGKILL');
    }
  }, 60_000);

  it('promotes a forged tool into the project from the shared store (this work dir has no copy), and every replica drops the forged one', async () => {
    const [a, b] = replicas;
    const forged = await callTool(a.url, 'forge_tool', renamed(addNumbers, 'add_promoted', 'agent'));
    expect(forged.body.value, JSON.stringify(forged.body)).toMatchObject({ success: true });
    const promoted = await forge(['tool', 'promote', 'add_promoted', '--workdir', tempDir()], project, { FORGE_STATE_URL: stateUrl });
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(existsSync(join(project, 'tools', 'add_promoted.js'))).toBe(true);
    for (const replica of [a, b]) {
      await waitUntil(async () => ((await callTool(replica.url, 'add_promoted', { a: 1, b: 1 })).body.error?.code === 'FORGE_TOOL_UNKNOWN' ? true : undefined), 15_000, `add_promoted gone from ${replica.url}`);
    }
  }, 90_000);

  it('lists and shows what the shared store holds with forge tool forged, from a work dir with no copies', async () => {
    const env = { FORGE_STATE_URL: stateUrl };
    const listed = await forge(['tool', 'forged', 'list', '--json', '--workdir', tempDir()], project, env);
    expect(listed.code, listed.stderr).toBe(0);
    const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['add_fleet', 'add_gone']));
    expect(names).not.toContain('add_promoted'); // promoted, so removed from the store
    const shown = await forge(['tool', 'forged', 'show', 'add_gone', '--json', '--workdir', tempDir()], project, env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).request.description).toBe('Add two numbers, again.');
  }, 60_000);

  it('counts calls_per_minute for a conversation across replicas', async () => {
    const results: string[] = [];
    for (let i = 0; i < 6; i++) {
      const replica = replicas[i % 2];
      results.push(await forgeForSession(replica, addNumbers, `rate_${i}`, 'rate'));
    }
    // 4 per minute (forge.yaml), whichever replica the conversation reaches.
    expect(results.map((r) => (r.includes('"success":true') ? 'ok' : r.includes('FORGE_FORGE_QUOTA') ? 'quota' : r))).toEqual(['ok', 'ok', 'ok', 'ok', 'quota', 'quota']);
  }, 60_000);
});
