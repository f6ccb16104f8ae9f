/**
 * A schema someone else wrote (an MCP server's, a forge request's) is
 * checked on the agent's one thread, against a value the same attacker
 * sends: `{xs: array of anyOf 1,000 objects}` and 40,000 items matching
 * only the last branch (909 kB, under the 1 MB body limit) held every
 * front end for 31 s per call; a `$ref` that doubles the work at every
 * level of a nested list held it for days at 40 levels. The count before
 * the check (runtime/tools/check-cost.ts) refuses such a value at once,
 * whichever way it comes: arguments over REST and MCP, a result an MCP
 * server sends against its own outputSchema, a forged tool's arguments.
 * Ordinary values through the same schemas still reach the tools.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../helpers/agent-process.ts';
import { IN_TIME, serveBuiltBundle, type ServedBundle } from '../helpers/served-bundle.ts';
import { forgeBin, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const TOKEN = 'schema-cost-token';
/** 1,000 object alternatives: an item matching only the last is tried against all of them. */
const FAN = { anyOf: Array.from({ length: 1000 }, (_, i) => ({ type: 'object', properties: { k: { const: `v${i}` } }, required: ['k'] })) };
const MANY = Array.from({ length: 40_000 }, () => ({ k: 'v999' }));
const FEW = MANY.slice(0, 5);
/** Both branches apply at every level, and both again at the next: 2^levels checks. */
const DOUBLING = { type: 'object', properties: { x: { $ref: '#/$defs/n' } }, $defs: { n: { type: 'array', items: { anyOf: [{ allOf: [{ $ref: '#/$defs/n' }, { not: {} }] }, { $ref: '#/$defs/n' }] } } } };
const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)]);
const TOO_COSTLY = 'would take too long to check against this schema';

/** An MCP server over stdio whose tools carry such schemas; it notes each call it gets in `calls`. */
function costlyServerScript(dir: string, calls: string): string {
  const sdk = (path: string) => JSON.stringify(pathToFileURL(join(repoRoot, 'node_modules/@modelcontextprotocol/sdk/dist/esm', path)).href);
  const file = join(dir, 'costly-mcp.mjs');
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
import { Server } from ${sdk('server/index.js')};
import { StdioServerTransport } from ${sdk('server/stdio.js')};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${sdk('types.js')};
const FAN = ${JSON.stringify(FAN)};
const server = new Server({ name: 'costly', version: '1.0.0' }, { capabilities: { tools: {} } });
const tools = [
  { name: 'union', description: 'Takes many rows.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { xs: { type: 'array', items: FAN } }, required: ['xs'] } },
  { name: 'nested', description: 'Takes nested lists.', annotations: { readOnlyHint: true }, inputSchema: ${JSON.stringify(DOUBLING)} },
  // 3,000 named properties of 60-character descriptions: about 200 kB of JSON, past what is compiled here.
  { name: 'huge', description: 'Takes one of many fields.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => ['f' + i, { type: 'integer', description: 'x'.repeat(60) }])), additionalProperties: false } },
  { name: 'rows', description: 'Returns n rows.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, outputSchema: { type: 'object', properties: { xs: { type: 'array', items: FAN } } } },
];
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args } = request.params;
  appendFileSync(${JSON.stringify(calls)}, name + '\\n');
  if (name === 'rows') {
    const xs = Array.from({ length: args.n }, () => ({ k: 'v999' }));
    return { content: [{ type: 'text', text: xs.length + ' rows' }], structuredContent: { xs } };
  }
  return { content: [{ type: 'text', text: 'server got ' + JSON.stringify(args).length + ' characters' }] };
});
await server.connect(new StdioServerTransport());
`,
  );
  return file;
}

let served: ServedBundle;
let agent: AgentProcess;
let calls: string;
let project: string;

beforeAll(async () => {
  const dir = tempDir();
  calls = join(dir, 'calls.txt');
  project = writeProject({
    'forge.yaml': `agent_id: schema-cost
version: 1.0.0
description: Reaches an MCP server whose schemas cost much to check, and forges tools.
mcp:
  servers:
    - name: costly
      transport: stdio
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(costlyServerScript(dir, calls))}]
tools: [math_calculate]
emergent: { allow_agent_scope: true }
`,
  });
  served = await serveBuiltBundle(project, TOKEN);
  agent = served.agent;
}, 120_000);

afterAll(async () => {
  // SIGKILL: an agent held by the check (what this file guards against) would not answer SIGTERM in time.
  await agent?.stop('SIGKILL');
});

// What it guards against took 31 s a call, or days (IN_TIME: served-bundle.ts).
const rest = (tool: string, body: unknown) => served.rest(tool, body);
const mcp = (tool: string, args: unknown) => served.mcp(tool, args);
/** `calling`, with /healthz and another tool asked while it runs: all must answer in time. */
async function whileHealthy<T>(calling: Promise<T>): Promise<T> {
  calling.catch(() => {}); // awaited below
  const health = await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(IN_TIME) });
  expect(health.status).toBe(200);
  expect(await rest('math_calculate', { expression: '1+1' })).toMatchObject({ status: 200, body: { ok: true } });
  return calling;
}
const callsMade = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []);

describe("an MCP server's input schema with 1,000 alternatives per item", () => {
  it('refuses 40,000 items over REST at once, without calling the server; five items reach it', async () => {
    const before = callsMade().length;
    const refused = await whileHealthy(rest('costly__union', { xs: MANY }));
    expect(refused).toMatchObject({ status: 400, body: { ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining(TOO_COSTLY) } } });
    expect(callsMade().length).toBe(before);
    expect(await rest('costly__union', { xs: FEW })).toMatchObject({ status: 200, body: { ok: true, value: expect.stringMatching(/^server got \d+ characters$/) } });
    expect(callsMade().slice(before)).toEqual(['union']);
  }, 60_000);

  it("refuses them over the agent's own MCP front end as an error result", async () => {
    const result = await whileHealthy(mcp('costly__union', { xs: MANY }));
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(TOO_COSTLY);
  }, 60_000);
});

describe("an MCP server's input schema whose $ref doubles the work at every level", () => {
  it('refuses a list nested 40 deep at once; three levels reach the server', async () => {
    const refused = await whileHealthy(rest('costly__nested', { x: nested(40) }));
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining(TOO_COSTLY) } });
    expect(await rest('costly__nested', { x: nested(3) })).toMatchObject({ status: 200, body: { ok: true } });
  }, 60_000);

  it('is refused by forge tool run --dry-run as the agent refuses it', async () => {
    const run = await runProcess(process.execPath, [forgeBin, 'tool', 'run', 'costly__nested', JSON.stringify({ x: nested(40) }), '--dry-run'], { cwd: project, timeoutMs: IN_TIME });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain('FORGE_TOOL_ARGS');
    expect(run.stderr).toContain(TOO_COSTLY);
  }, 60_000);
});

describe("an MCP server's result against its own outputSchema with 1,000 alternatives per item", () => {
  it('is refused at once when it has 40,000 items, and the call fails saying why; five items come back', async () => {
    const refused = await whileHealthy(rest('costly__rows', { n: 40_000 }));
    expect(refused.body.ok).toBe(false);
    expect(JSON.stringify(refused.body.error)).toContain(TOO_COSTLY);
    expect(await rest('costly__rows', { n: 5 })).toMatchObject({ status: 200, body: { ok: true } });
  }, 60_000);
});

describe("a forged tool's input schema with 400 alternatives per item (a forged schema holds at most 64 KB)", () => {
  const fan = { anyOf: FAN.anyOf.slice(0, 400) };
  const rows = (n: number) => Array.from({ length: n }, () => ({ k: 'v399' }));
  it('is forged, refuses 40,000 items at once, and runs with five', async () => {
    const forged = await rest('forge_tool', {
      name: 'count_rows',
      description: 'Counts rows.',
      scope: 'agent',
      inputSchema: { type: 'object', properties: { xs: { type: 'array', items: fan } }, required: ['xs'] },
      outputSchema: { type: 'object' },
      implementation: { mode: 'sandbox', code: 'function execute(input) { return { rows: input.xs.length }; }' },
      testCases: [{ input: { xs: [{ k: 'v1' }] }, expectedOutput: { rows: 1 } }],
    });
    expect(forged.body, JSON.stringify(forged.body).slice(0, 2000)).toMatchObject({ ok: true, value: { success: true } });
    const refused = await whileHealthy(rest('count_rows', { xs: rows(40_000) }));
    expect(refused).toMatchObject({ status: 400, body: { ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining(TOO_COSTLY) } } });
    expect(await rest('count_rows', { xs: rows(5) })).toMatchObject({ status: 200, body: { ok: true, value: { rows: 5 } } });
  }, 60_000);
});

describe("an MCP server's schema past 128 KB of JSON", () => {
  it('is not compiled here: the start says so once, naming the tool and the size, and a call reaches the server, which checks its own input', async () => {
    const warnings = agent.output().split('\n').filter((line) => line.includes('FORGE_ADAPTER_SCHEMA'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/tool "costly__huge": its input schema \(\d{6} characters of JSON\) is past 131072 characters/);
    const before = callsMade().length;
    // Not an integer, and not a field it declares: the server's to refuse, not the agent's.
    expect(await whileHealthy(rest('costly__huge', { f1: 'text', unknown: true }))).toMatchObject({ status: 200, body: { ok: true } });
    expect(callsMade().slice(before)).toEqual(['huge']);
  }, 60_000);
});
