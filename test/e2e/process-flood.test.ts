/**
 * A flood of calls to tools that each start a process — a script-style
 * Python tool, a YAML tool, grep_search's ripgrep — once started as many processes as calls came
 * in. The built bundle runs at most FORGE_TOOL_PROCESSES of them at once
 * (here 2) for every kind of tool together, lets FORGE_TOOL_PROCESS_QUEUE
 * calls wait (here 3), and refuses the rest at once with FORGE_TOOL_BUSY.
 * Each tool process writes a line to started.log and then waits for the
 * file "open": what runs, what waits and what is refused does not depend on
 * the machine's speed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forge, tempDir, writeProject } from '../helpers/project.ts';

const TOKEN = 'flood-token';
const auth = { authorization: `Bearer ${TOKEN}` };
let agent: AgentProcess;
let workDir: string;

beforeAll(async () => {
  const project = writeProject({
    'forge.yaml': 'agent_id: flood\nversion: 1.0.0\ndescription: x\ntools:\n  - { name: grep_search, config: { engine: ripgrep } }\n',
    'tools/hold_script.py':
      '"""\nTool: hold_script\nDescription: Answers its number once the file "open" exists.\nTags: read\n\nInput:\n  n (int): What to answer.\n"""\nimport json, os, sys, time\nargs = json.load(sys.stdin)\nwith open("started.log", "a") as log:\n    log.write("script\\n")\nwhile not os.path.exists("open"):\n    time.sleep(0.02)\nprint(args["n"])\n',
    'tools/hold_yaml.yaml': 'description: Answers its number once the file "open" exists.\ntags: [read]\nparameters:\n  n: { type: integer }\nsh: \'echo yaml >> started.log; while [ ! -e open ]; do sleep 0.02; done; echo {n}\'\n',
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  workDir = tempDir();
  agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], {
    cwd: workDir,
    env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_TOOL_PROCESSES: '2', FORGE_TOOL_PROCESS_QUEUE: '3' },
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
});

const started = () => (existsSync(join(workDir, 'started.log')) ? readFileSync(join(workDir, 'started.log'), 'utf8').split('\n').filter(Boolean).length : 0);
const call = (tool: string, n: number) => fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers: auth, body: JSON.stringify({ n }) }).then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any }));

describe('a flood of calls to tools that start processes', () => {
  it('runs 2 processes at once across tool kinds, lets 3 calls wait, refuses the rest with FORGE_TOOL_BUSY, then answers the waiting ones', async () => {
    const answers: Awaited<ReturnType<typeof call>>[] = [];
    const flood = Array.from({ length: 8 }, (_, i) => call(i % 2 ? 'hold_yaml' : 'hold_script', i).then((answer) => (answers.push(answer), answer)));
    // Nothing but a refusal can answer before "open" exists; without a bound all 8 would start.
    await waitFor(() => answers.length >= 3 || started() > 2);
    await waitFor(() => started() >= 2);
    expect(started()).toBe(2);
    expect(answers).toHaveLength(3);
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 503, retryAfter: '1', body: { ok: false, error: { code: 'FORGE_TOOL_BUSY', message: expect.stringContaining('was not started: 2 tool processes are running and 3 calls are waiting for one') } } });
    }
    // ripgrep is a process per search too: refused while the slots are full, not started beside them.
    const grep = await fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: auth, body: JSON.stringify({ pattern: 'anything' }) });
    expect(grep.status).toBe(503);
    expect(await grep.json()).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_BUSY', message: expect.stringContaining('ripgrep was not started') } });
    // MCP meets the same bound while it is full.
    const client = new Client({ name: 'flood', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: auth } }));
    try {
      const refused = (await client.callTool({ name: 'hold_yaml', arguments: { n: 100 } })) as { isError?: boolean; content: { text: string }[] };
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toContain('FORGE_TOOL_BUSY');
      expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);

      writeFileSync(join(workDir, 'open'), '');
      const results = await Promise.all(flood);
      const searched = await fetch(`${agent.url}/tools/grep_search`, { method: 'POST', headers: auth, body: JSON.stringify({ pattern: 'script' }) });
      expect(await searched.json()).toMatchObject({ ok: true, value: { engine: 'ripgrep', matches: expect.arrayContaining([expect.objectContaining({ path: 'started.log', text: 'script' })]) } });
      expect(results.filter((r) => r.status === 200).map((r) => r.body.value).length).toBe(5);
      expect(started()).toBe(5);
      // Free again: a call runs at once.
      const after = (await client.callTool({ name: 'hold_script', arguments: { n: 7 } })) as { isError?: boolean; content: { text: string }[] };
      expect(after.isError).toBeFalsy();
      expect(after.content[0].text).toContain('7');
    } finally {
      await client.close();
    }
  }, 90_000);
});

async function waitFor(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
