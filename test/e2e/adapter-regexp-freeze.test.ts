/**
 * A pattern an MCP server or an OpenAPI document declares runs on the
 * agent's one thread when the arguments are checked. V8's linear-time
 * engine takes over a runaway match of any pattern it can run, but not one
 * with a lookaround, a backreference or `\p{…}`: `^(?=(a+)+$)` against
 * forty a's and a "!" held every front end, /healthz and SIGTERM. Here a
 * built bundle serves the tools of an MCP server (stdio, written with the
 * SDK's own Server) and of an OpenAPI document on loopback whose schemas
 * carry such patterns; the calls reach the services, which answer for
 * themselves, while the agent keeps answering everyone else.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { startServer, type TestServer } from '../helpers/http-server.ts';
import { forgeBin, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const TOKEN = 'adapter-regexp-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/** What makes the backtracking engine run for ever (2^40 ways to split the a's) against these patterns. */
const PATHOLOGICAL = `${'a'.repeat(40)}!`;
const LOOKAHEAD = '^(?=(a+)+$)';
const BACKREFERENCE = '^(a+)+\\1$';
/** A runaway pattern the linear-time engine runs: still checked here. */
const LINEAR = '^(a+)+$';

/** An MCP server over stdio that declares the patterns and never runs them: it answers with what it was sent. */
function evilServerScript(dir: string): string {
  const sdk = (path: string) => JSON.stringify(pathToFileURL(join(repoRoot, 'node_modules/@modelcontextprotocol/sdk/dist/esm', path)).href);
  const file = join(dir, 'evil-mcp.mjs');
  writeFileSync(
    file,
    `import { Server } from ${sdk('server/index.js')};
import { StdioServerTransport } from ${sdk('server/stdio.js')};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${sdk('types.js')};
const server = new Server({ name: 'evil', version: '1.0.0' }, { capabilities: { tools: {} } });
const tool = (name, pattern) => ({ name, description: 'Looks a word up.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { q: { type: 'string', pattern } }, required: ['q'] } });
// The pattern kept where no schema keyword is, and reached by $ref (ajv resolves a pointer to anywhere in the schema).
const stashed = { name: 'stashed', description: 'Looks a word up.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', 'x-stash': { type: 'string', pattern: ${JSON.stringify(LOOKAHEAD)} }, properties: { q: { $ref: '#/x-stash' } }, required: ['q'] } };
// The pattern in the output schema; the result is what the pattern would run on.
const shaped = { name: 'shaped', description: 'Echoes a word.', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, outputSchema: { type: 'object', properties: { word: { type: 'string', pattern: ${JSON.stringify(LOOKAHEAD)} } } } };
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool('lookahead', ${JSON.stringify(LOOKAHEAD)}), tool('backreference', ${JSON.stringify(BACKREFERENCE)}), tool('linear', ${JSON.stringify(LINEAR)}), stashed, shaped] }));
server.setRequestHandler(CallToolRequestSchema, async (request) => request.params.name === 'shaped'
  ? { content: [{ type: 'text', text: JSON.stringify({ word: request.params.arguments.q }) }], structuredContent: { word: request.params.arguments.q } }
  : { content: [{ type: 'text', text: 'server got ' + JSON.stringify(request.params.arguments) }] });
await server.connect(new StdioServerTransport());
`,
  );
  return file;
}

function shopDocument(baseUrl: string) {
  return {
    openapi: '3.0.3',
    info: { title: 'Shop', version: '1.0.0' },
    servers: [{ url: baseUrl }],
    paths: {
      '/items': {
        get: {
          operationId: 'findItems',
          parameters: [
            { name: 'q', in: 'query', required: true, schema: { type: 'string', pattern: BACKREFERENCE } },
            { name: 'sku', in: 'query', schema: { type: 'string', pattern: LINEAR } },
          ],
          responses: { '200': { description: 'found', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/orders': {
        post: {
          operationId: 'placeOrder',
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { note: { type: 'string', pattern: LOOKAHEAD } }, required: ['note'] } } } },
          responses: { '200': { description: 'placed', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  };
}

/** `forge ARGS`, killed after `ms`: its exit code (null when killed) and output. */
async function boundedForge(args: string[], cwd: string, ms: number): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await runProcess(process.execPath, [forgeBin, ...args], { cwd, timeoutMs: ms });
  return { code, output: stdout + stderr };
}

let agent: AgentProcess;
let shop: TestServer;
let project: string;

beforeAll(async () => {
  // The service answers for itself: it refuses what its own check would, and says what it got.
  shop = await startServer((req, res) => res.writeHead(req.method === 'GET' ? 422 : 200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: req.method === 'GET' ? req.url : JSON.parse(req.body) })));
  project = writeProject({
    'forge.yaml': `agent_id: adapter-regexp
version: 1.0.0
description: Reaches an MCP server and an API whose schemas carry runaway patterns.
mcp:
  servers:
    - name: evil
      transport: stdio
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(evilServerScript(tempDir()))}]
apis:
  - name: shop
    spec: specs/shop.json
    base_url: ${JSON.stringify(shop.url)}
tool_dirs: [tools]
tools: [math_calculate]
emergent: { allow_agent_scope: true }
`,
    // A step that always passes the same value: the build checks it against the called tool's schema.
    'tools/fixed_lookup.yaml': `description: Looks up a fixed word.
tags: [read]
steps:
  - name: look
    tool: evil__lookahead
    args: { q: ${JSON.stringify(PATHOLOGICAL)} }
`,
  });
  mkdirSync(join(project, 'specs'));
  writeFileSync(join(project, 'specs', 'shop.json'), JSON.stringify(shopDocument(shop.url)));
  // Bounded: a build that ran the pattern against the step's value would never end.
  const built = await boundedForge(['build'], project, 60_000);
  expect(built.code, built.output).toBe(0);
  agent = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN } });
}, 120_000);

afterAll(async () => {
  // SIGKILL: an agent held by a runaway match (what this file guards against) would never answer SIGTERM.
  await agent?.stop('SIGKILL');
});

/** Generous for a loaded machine; the backtracking it guards against runs for hours. */
const IN_TIME = 8_000;
const call = (tool: string, body: unknown) =>
  fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(IN_TIME) }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
/** The call, and /healthz asked while it is checked: both must answer in time. */
async function callWhileHealthy(tool: string, body: unknown) {
  const calling = call(tool, body);
  // Awaited below: not an unhandled rejection when the checks before it fail first.
  calling.catch(() => {});
  const health = await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(IN_TIME) });
  expect(health.status).toBe(200);
  expect(await call('math_calculate', { expression: '1+1' })).toMatchObject({ status: 200, body: { ok: true } });
  return calling;
}

describe('a pattern only the backtracking engine runs, in an adapter tool\'s schema', () => {
  it.each([
    ['a lookahead', 'evil__lookahead'],
    ['a backreference', 'evil__backreference'],
  ])('of an MCP server (%s) does not hold the agent: the argument reaches the server', async (_what, tool) => {
    const result = await callWhileHealthy(tool, { q: PATHOLOGICAL });
    expect(result.body).toMatchObject({ ok: true, value: `server got ${JSON.stringify({ q: PATHOLOGICAL })}` });
  }, 60_000);

  it('of an OpenAPI query parameter (a backreference) does not hold the agent: the API answers for itself', async () => {
    const result = await callWhileHealthy('shop__findItems', { q: PATHOLOGICAL });
    expect(result.body).toMatchObject({ ok: false, error: { code: 'FORGE_API_STATUS', message: expect.stringContaining('422') } });
    expect(shop.requests.some((r) => new URL(r.url, shop.url).searchParams.get('q') === PATHOLOGICAL)).toBe(true);
  }, 60_000);

  it('of an OpenAPI request body (a lookahead) does not hold the agent: the body reaches the API', async () => {
    const result = await callWhileHealthy('shop__placeOrder', { note: PATHOLOGICAL });
    expect(result.body).toMatchObject({ ok: true, value: { status: 200, body: { got: { note: PATHOLOGICAL } } } });
  }, 60_000);

  it('is said once at start-up, naming the tool, where the pattern is and the pattern', () => {
    const warnings = agent.output().split('\n').filter((line) => line.includes('FORGE_ADAPTER_PATTERN'));
    expect(warnings).toHaveLength(5);
    for (const [tool, at, pattern] of [
      ['evil__lookahead', '/properties/q/pattern', LOOKAHEAD],
      ['evil__shaped', '/properties/word/pattern', LOOKAHEAD],
      ['evil__backreference', '/properties/q/pattern', BACKREFERENCE],
      ['shop__findItems', '/properties/q/pattern', BACKREFERENCE],
      ['shop__placeOrder', '/properties/note/pattern', LOOKAHEAD],
    ]) {
      expect(warnings.filter((line) => line.includes(`tool "${tool}"`) && line.includes(`${at}: ${JSON.stringify(pattern)}`))).toHaveLength(1);
    }
  });

  it('is still shown to clients as the service declared it', async () => {
    const listed = (await (await fetch(`${agent.url}/tools`, { headers, signal: AbortSignal.timeout(IN_TIME) })).json()) as any;
    const tools = (Array.isArray(listed) ? listed : listed.tools) as { name: string; inputSchema: any }[];
    expect(tools.find((t) => t.name === 'evil__lookahead')?.inputSchema.properties.q.pattern).toBe(LOOKAHEAD);
    const manifest = JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8'));
    expect(manifest.tools.find((t: { name: string }) => t.name === 'shop__placeOrder').inputSchema.properties.note.pattern).toBe(LOOKAHEAD);
  });
});

describe('a pattern only the backtracking engine runs, reached where the walk over the schema does not step', () => {
  it('through a $ref to a part of the schema no keyword holds: the argument reaches the server', async () => {
    const result = await callWhileHealthy('evil__stashed', { q: PATHOLOGICAL });
    expect(result.body).toMatchObject({ ok: true, value: `server got ${JSON.stringify({ q: PATHOLOGICAL })}` });
  }, 60_000);

  it("in an MCP server's output schema, checked by the agent's own MCP front end: the result reaches the client", async () => {
    const calling = fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'evil__shaped', arguments: { q: PATHOLOGICAL } } }),
      signal: AbortSignal.timeout(IN_TIME),
    }).then(async (res) => (await res.json()) as any);
    calling.catch(() => {});
    const health = await fetch(`${agent.url}/healthz`, { signal: AbortSignal.timeout(IN_TIME) });
    expect(health.status).toBe(200);
    expect((await calling).result).toMatchObject({ structuredContent: { word: PATHOLOGICAL } });
    expect((await calling).result.isError).toBeFalsy();
  }, 60_000);

  it('in a forged tool\'s schema through a $ref: forge_tool refuses it, and the agent is not held while it checks', async () => {
    const request = {
      name: 'forged_stash',
      scope: 'agent',
      description: 'Looks up a word.',
      inputSchema: { type: 'object', 'x-stash': { type: 'string', pattern: LOOKAHEAD }, properties: { q: { $ref: '#/x-stash' } }, required: ['q'] },
      outputSchema: { type: 'string' },
      implementation: { mode: 'compose', steps: [{ tool: 'evil__lookahead', args: { q: '{q}' } }] },
      testCases: [{ input: { q: PATHOLOGICAL }, expectedOutput: `server got ${JSON.stringify({ q: PATHOLOGICAL })}` }],
    };
    const forged = await callWhileHealthy('forge_tool', request);
    expect(JSON.stringify(forged.body)).toContain('/x-stash/pattern');
    expect(forged.body).toMatchObject({ ok: true, value: { success: false } });
  }, 60_000);
});

describe('forge tool run --dry-run', () => {
  it('checks an adapter tool\'s arguments without such a pattern, as the agent does', async () => {
    const run = await boundedForge(['tool', 'run', 'evil__lookahead', '--dry-run', '--param', `q=${PATHOLOGICAL}`], project, 30_000);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('the arguments are valid for evil__lookahead');
  }, 60_000);
});

describe('a composition that always passes an adapter tool a value such a pattern would run on', () => {
  it('builds (above), and its calls reach the server', async () => {
    const result = await callWhileHealthy('fixed_lookup', {});
    expect(result.body).toMatchObject({ ok: true, value: `server got ${JSON.stringify({ q: PATHOLOGICAL })}` });
  }, 60_000);

  it('is forged by forge_tool without the agent being held while the forge checks it', async () => {
    const request = {
      name: 'forged_lookup',
      description: 'Looks up a fixed word.',
      scope: 'agent',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'string' },
      implementation: { mode: 'compose', steps: [{ tool: 'evil__lookahead', args: { q: PATHOLOGICAL } }] },
      testCases: [{ input: {}, expectedOutput: `server got ${JSON.stringify({ q: PATHOLOGICAL })}` }],
    };
    const forged = await callWhileHealthy('forge_tool', request);
    expect(forged.body).toMatchObject({ ok: true, value: { success: true } });
  }, 60_000);
});

describe('a pattern the linear-time engine runs, in an adapter tool\'s schema', () => {
  it.each([
    ['evil__linear', { q: PATHOLOGICAL }],
    ['shop__findItems', { q: 'aa', sku: PATHOLOGICAL }],
  ])('is still checked here: %s refuses a value that does not match, and the service is not called', async (tool, args) => {
    const before = shop.requests.length;
    const result = await callWhileHealthy(tool, args);
    expect(result.body).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining(`must match pattern "${LINEAR}"`) } });
    expect(shop.requests.length).toBe(before);
  }, 60_000);
});
