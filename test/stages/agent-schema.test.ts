/**
 * schemas/agent.schema.json, the JSON Schema of agent.json: it is what
 * `npm run schemas:agent` generates from runtime/manifest.ts, and the
 * agent.json of real builds (the example project, a fixture, a project that
 * uses every top-level field) passes it, while a manifest with a field of the
 * wrong type, an unknown field or a missing one does not.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { Ajv } from '../../runtime/vendor/ajv.ts';
import { AGENT_SCHEMA_FILE, agentSchemaText } from '../../scripts/generate-agent-schema.ts';
import { filesystemServerScript } from '../helpers/mcp-servers.ts';
import { fixtureProject, fixturesDir, forge, repoRoot, tempDir } from '../helpers/project.ts';
import { forgetinyGreetTool } from '../helpers/python-wheel.ts';

const committed = readFileSync(AGENT_SCHEMA_FILE, 'utf8');
const schema = JSON.parse(committed) as { properties: Record<string, unknown> };
// strict: an unknown keyword or a contradiction in the schema is an error, not ignored.
const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);

/** ajv's errors for the manifest ([] when it passes), with where and what, so a failure says which field. */
function problems(manifest: unknown): string[] {
  return validate(manifest) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

async function built(dir: string, args: string[] = [], env?: NodeJS.ProcessEnv): Promise<AgentManifest> {
  const result = await forge(['build', ...args], dir, env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(readFileSync(join(dir, '.forge-output', 'agent.json'), 'utf8')) as AgentManifest;
}

describe('schemas/agent.schema.json', () => {
  it('is what `npm run schemas:agent` generates from runtime/manifest.ts', () => {
    expect(agentSchemaText(), 'schemas/agent.schema.json is stale: run `npm run schemas:agent` and commit the file').toBe(committed);
  }, 60_000);
});

/** A Python tool that declares a third-party package in a PEP 723 block, and has an Output. */
const GREET_PY = forgetinyGreetTool({ output: true });

/** A project that sets every top-level field agent.json has (checked below), most of them in several ways. */
function everythingProject(): string {
  const dir = tempDir('forge-agent-schema-');
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'specs'));
  mkdirSync(join(dir, 'tools'));
  cpSync(join(fixturesDir, 'openapi', 'petstore-openapi3.json'), join(dir, 'specs', 'petstore.json'));
  cpSync(join(fixturesDir, 'openapi', 'petstore-swagger2.json'), join(dir, 'specs', 'petstore2.json'));
  // The composed fixture's YAML (with interpreters) and composed TS tools, without the one that needs a user scope.
  for (const tool of ['count.yaml', 'note_write.yaml', 'shout.yaml', 'save_each.ts', 'save_shouted.ts']) cpSync(join(fixturesDir, 'composed', 'tools', tool), join(dir, 'tools', tool));
  writeFileSync(join(dir, 'tools', 'greet.py'), GREET_PY);
  writeFileSync(join(dir, 'requirements.txt'), 'requests==2.32.3\n');
  writeFileSync(
    join(dir, 'forge.yaml'),
    `agent_id: schema-everything
version: 2.0.0-beta.1
description: Uses every field agent.json has.
model:
  provider: anthropic
  name: claude-sonnet-4-5
  api_key_env: ANTHROPIC_API_KEY
  prompt_cache: false
  extra_body: { thinking: { type: enabled, budget_tokens: 1024 } }
  max_tokens: 2048
  # 1: Anthropic takes no other with thinking on.
  temperature: 1
  max_iterations: 12
  fallbacks:
    - provider: openai
      name: gpt-4o-mini
      base_url: https://gateway.example.com:8443/v1
      api_key_env: GATEWAY_KEY
      extra_body: { reasoning_effort: low }
workdir: data
tool_dirs: [tools]
tools:
  - uuid_generate
  - name: webhook_call
    config: { webhooks: { notify: "https://hooks.example.com/notify" } }
strict_outputs: true
env_passthrough: [ZETA, ALPHA]
egress:
  mode: allowlist
  allowed_domains: [api.github.com]
  allowed_addresses: [127.0.0.1]
approval:
  auto_approve: ["tag:read"]
  auto_deny: ["name:uuid_generate"]
  clients: policy
server: { host: 0.0.0.0, port: 9090 }
metrics: public
runtime: { node: 22 }
state: "postgres://forge@db.example.com:5432/forge"
emergent: { timeout: 2, memory: 48 }
schedules:
  - id: daily-report
    cron: "0 9 * * 1-5"
    task: Summarize yesterday.
    timezone: Europe/Paris
  - id: poll
    cron: "@every 10m"
    task: Check the queue.
sandbox:
  mode: auto
  memory: 512MB
  cpu: 30s
  processes: 256
  network: false
  visible: ["~/.kube"]
  tools:
    greet: { memory: 1GiB, network: true }
mcp:
  servers:
    - name: fs
      transport: stdio
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(filesystemServerScript)}, ${JSON.stringify(join(dir, 'data'))}]
      env: { LOG_LEVEL: "\${FS_LOG_LEVEL}" }
      tools: { allow: ["read_*", list_directory], deny: [read_media_file] }
    - name: remote
      transport: http
      url: http://127.0.0.1:9/mcp
      headers: { Authorization: "Bearer \${REMOTE_TOKEN}" }
      required: false
      timeout: 2s
apis:
  - name: petstore
    spec: specs/petstore.json
    base_url: https://petstore.example.com/v3
    auth: { type: api_key, in: header, name: api_key, value_env: PETSTORE_KEY }
    include: [getPetById, addPet, findPetsByStatus]
  - name: legacy
    spec: specs/petstore2.json
    auth: { type: basic, username_env: LEGACY_USER, password_env: LEGACY_PASSWORD }
    include: [getPetById]
`,
  );
  return dir;
}

describe('agent.json of real builds', () => {
  let example: AgentManifest;
  let basic: AgentManifest;
  let everything: AgentManifest;

  beforeAll(async () => {
    const exampleDir = tempDir('forge-agent-schema-example-');
    cpSync(join(repoRoot, 'forge.yaml'), join(exampleDir, 'forge.yaml'));
    cpSync(join(repoRoot, 'tools'), join(exampleDir, 'tools'), { recursive: true });
    // The example as its comment builds it (--prod), the basic fixture in dev mode (its dev_ tools stay).
    example = await built(exampleDir, ['--prod']);
    basic = await built(fixtureProject('basic'));
    everything = await built(everythingProject(), ['--prod'], { FS_LOG_LEVEL: 'info', REMOTE_TOKEN: 'unused' });
  }, 120_000);

  it('passes for the example project at the repository root', () => {
    expect(problems(example)).toEqual([]);
  });

  it('passes for the basic fixture built in dev mode (dev tools, script-style tools)', () => {
    expect(basic.categories.dev.length).toBeGreaterThan(0);
    expect(basic.tools.some((t) => t.source?.style === 'script')).toBe(true);
    expect(problems(basic)).toEqual([]);
  });

  it('passes for a project that sets every top-level field of the schema', () => {
    // So the project keeps up with the schema: a field added to AgentManifest must be added to it too.
    expect(Object.keys(everything).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(everything.model?.fallbacks).toHaveLength(1);
    expect(everything.mcp?.servers.map((s) => s.transport)).toEqual(['stdio', 'http']);
    expect(new Set(everything.tools.flatMap((t) => (t.adapter ? [t.adapter.kind] : [])))).toEqual(new Set(['mcp', 'openapi']));
    expect(everything.apis?.map((a) => a.auth?.type)).toEqual(['api_key', 'basic']);
    expect(everything.python?.dependencies).toEqual(['forgetiny>=0.1', 'requests==2.32.3']);
    expect(everything.sandbox?.tools?.greet).toBeDefined();
    expect(everything.tools.some((t) => t.name === 'forge_tool')).toBe(true);
    expect(problems(everything)).toEqual([]);
  });

  it('refuses a manifest with a field of the wrong type, an unknown field or a missing one', () => {
    const variants: [string, (m: Record<string, any>) => void, string][] = [
      ['a port that is a string', (m) => (m.server.port = '9090'), '/server/port'],
      ['a tool of no known category', (m) => (m.tools[0].category = 'plugin'), '/tools/0/category'],
      ['a fallback of an unknown provider', (m) => (m.model.fallbacks[0].provider = 'gemini'), '/model/fallbacks/0/provider'],
      ['a schedule without its task', (m) => delete m.schedules[0].task, '/schedules/0'],
      ['a sandbox mode that does not exist', (m) => (m.sandbox.mode = 'strict'), '/sandbox/mode'],
      ['an MCP server whose timeout is text', (m) => (m.mcp.servers[0].timeout_ms = '30s'), '/mcp/servers/0/timeout_ms'],
      ['egress without its domains', (m) => delete m.egress.allowed_domains, '/egress'],
      ['a field agent.json does not have', (m) => (m.extra = true), '/'],
      ['a misspelled field of the model', (m) => (m.model.max_token = 10), '/model'],
    ];
    for (const [what, change, path] of variants) {
      const manifest = structuredClone(everything) as unknown as Record<string, any>;
      change(manifest);
      expect(problems(manifest).some((p) => p.startsWith(`${path} `)), `${what}: ${problems(manifest).join('; ')}`).toBe(true);
    }
  });

  it('refuses a count, port, timeout or limit that is not a whole number (each is read as one)', () => {
    const variants: [string, (m: Record<string, any>) => void, string][] = [
      ['a fractional port', (m) => (m.server.port = 8080.5), '/server/port'],
      ['a fractional max_tokens', (m) => (m.model.max_tokens = 1024.5), '/model/max_tokens'],
      ['a fractional max_iterations', (m) => (m.model.max_iterations = 2.5), '/model/max_iterations'],
      ["a fractional tool's timeout", (m) => (m.tools[0].timeoutMs = 1500.5), '/tools/0/timeoutMs'],
      ['a fractional MCP timeout', (m) => (m.mcp.servers[0].timeout_ms = 30000.5), '/mcp/servers/0/timeout_ms'],
      ['a fractional endpoint port', (m) => (m.egress.endpoint_ports = [8443.5]), '/egress/endpoint_ports/0'],
      ['a fractional process limit', (m) => (m.sandbox.tools.greet.processes = 64.5), '/sandbox/tools/greet/processes'],
      ['a fractional Node.js line', (m) => (m.runtime.node = 20.5), '/runtime/node'],
    ];
    for (const [what, change, path] of variants) {
      const manifest = structuredClone(everything) as unknown as Record<string, any>;
      change(manifest);
      expect(problems(manifest), what).toContain(`${path} must be integer {"type":"integer"}`);
    }
    // The same fields whole still pass.
    const whole = structuredClone(everything) as unknown as Record<string, any>;
    whole.egress.endpoint_ports = [8443];
    whole.tools[0].timeoutMs = 1500;
    expect(problems(whole)).toEqual([]);
  });

  it('leaves open what the types leave open: tool schemas, tool config, forge_tool settings, extra_body', () => {
    const manifest = structuredClone(everything) as unknown as Record<string, any>;
    manifest.tools[0].inputSchema = { type: 'object', 'x-anything': [1, 2] };
    manifest.tools[0].config = { anything: { nested: true } };
    manifest.emergent = { a_setting_of_a_later_forge: 1 };
    manifest.model.extra_body = { vendor_flag: 'on' };
    expect(problems(manifest)).toEqual([]);
  });
});
