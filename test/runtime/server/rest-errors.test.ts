/**
 * REST error answers: a refusal by an auto_deny rule is a 403 like the
 * other approval refusals, and a failing tool's details (its stack trace,
 * with the server's paths) stay in the server log instead of the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalPolicy } from '../../../runtime/guard/approval-policy.ts';
import type { AgentManifest, ApprovalSettings } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

const TOKEN = 'rest-errors-token';
const logged: string[] = [];
let agent: RunningAgent;

beforeAll(async () => {
  const approval: ApprovalSettings = { auto_approve: ['tag:read'], auto_deny: ['name:shred'] };
  const registry = new ToolRegistry({ workDir: tempDir(), approval: ApprovalPolicy.create(approval) });
  const tool = (name: string, execute: Tool['execute']): Tool => ({ name, description: `${name} tool`, category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute });
  registry.register(tool('shred', async () => ok('shredded')), 'test');
  registry.register(
    tool('boom', async () => {
      throw new Error('the disk is on fire');
    }),
    'test',
  );
  const manifest = { agent_id: 'rest-errors', version: '1.0.0', description: '', tools: registry.list(), approval } as unknown as AgentManifest;
  const log = { debug() {}, info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m) };
  agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log, env: { FORGE_AUTH_TOKEN: TOKEN } });
});

afterAll(async () => {
  await agent?.stop(100);
});

const call = (name: string) =>
  fetch(`${agent.url}/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' }).then(async (r) => ({ status: r.status, text: await r.text() }));

describe('REST errors', () => {
  it('answers a refusal by an auto_deny rule with 403, as the other approval refusals', async () => {
    const { status, text } = await call('shred');
    expect(JSON.parse(text).error.code).toBe('FORGE_TOOL_DENIED');
    expect(status).toBe(403);
  });

  it('keeps a failing tool\'s stack trace in the server log, out of the answer', async () => {
    const { status, text } = await call('boom');
    expect(status).toBe(422);
    const body = JSON.parse(text);
    expect(body.error).toMatchObject({ code: 'FORGE_TOOL_FAILED', message: expect.stringContaining('the disk is on fire') });
    expect(body.error).not.toHaveProperty('details');
    // Where they are instead.
    expect(body.error.hint).toBe("the stack trace is in the server's log");
    expect(text).not.toContain(process.cwd());
    expect(text).not.toMatch(/\n\s+at /);
    expect(logged.join('\n')).toMatch(/tool boom failed over REST \(FORGE_TOOL_FAILED\): Error: the disk is on fire\n\s+at /);
  });
});

describe('REST failures before the tool runs', () => {
  it.each([
    ['a body that is not JSON', 'shred', '{"x": ', 400, 'FORGE_BAD_JSON'],
    ['arguments that are not an object', 'shred', '[1]', 400, 'FORGE_BAD_JSON'],
    ['a tool that does not exist', 'nothing_here', '{}', 404, 'FORGE_TOOL_UNKNOWN'],
  ])('answers %s in the shape of a failed call: { ok: false, error }', async (_what, name, body, status, code) => {
    const answer = await fetch(`${agent.url}/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
    expect(answer.status).toBe(status);
    expect(await answer.json()).toMatchObject({ ok: false, error: { code, message: expect.any(String) } });
  });

  it('GET /tools/:name of a misspelt tool gives the hint a call to it gets', async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const described = await fetch(`${agent.url}/tools/shrde`, { headers });
    const called = await fetch(`${agent.url}/tools/shrde`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
    expect(described.status).toBe(404);
    const error = { code: 'FORGE_TOOL_UNKNOWN', message: 'no tool named "shrde"', hint: 'did you mean "shred"?' };
    expect(await described.json()).toEqual({ ok: false, error });
    expect(await called.json()).toMatchObject({ ok: false, error });
  });

  it('answers a missing token in that shape too', async () => {
    const answer = await fetch(`${agent.url}/tools/shred`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^FORGE_/) } });
  });
});
