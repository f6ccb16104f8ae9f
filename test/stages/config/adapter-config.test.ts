import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../stages/config/load-config.ts';

const load = (text: string) => loadConfigText('/project/forge.yaml', text, '/project');
const head = 'agent_id: a\nversion: 1.0.0\n';

describe('forge.yaml: mcp, apis and egress addresses', () => {
  it('resolves servers and APIs with their defaults', async () => {
    const { config, diagnostics } = await load(`${head}mcp:
  servers:
    - name: fs
      transport: stdio
      command: npx
      args: [-y, "@modelcontextprotocol/server-filesystem", /data]
      env: { LOG_LEVEL: debug }
      tools: { deny: [write_*] }
    - name: docs
      transport: http
      url: https://mcp.example.com/mcp
      headers: { Authorization: "Bearer \${DOCS_TOKEN}" }
      timeout: 5s
      required: false
apis:
  - name: petstore
    spec: specs/petstore.json
    base_url: https://petstore.example.com/v2
    auth: { type: api_key, name: api_key, value_env: PETSTORE_KEY }
    include: ["*Pet*"]
    timeout: 1.5m
  - name: remote
    spec: https://api.example.com/openapi.json
egress:
  allowed_addresses: [127.0.0.1, "10.0.0.0/8", "::1"]
`);
    expect(diagnostics).toEqual([]);
    expect(config!.mcpServers).toMatchObject([
      { name: 'fs', transport: 'stdio', command: 'npx', env: { LOG_LEVEL: 'debug' }, timeout_ms: 30_000, required: true, tools: { deny: ['write_*'] }, at: { line: 5 } },
      { name: 'docs', transport: 'http', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' }, timeout_ms: 5_000, required: false },
    ]);
    expect(config!.apis).toMatchObject([
      { name: 'petstore', specLocation: '/project/specs/petstore.json', specIsUrl: false, auth: { type: 'api_key', in: 'header' }, timeout_ms: 90_000 },
      { name: 'remote', specLocation: 'https://api.example.com/openapi.json', specIsUrl: true, timeout_ms: 30_000 },
    ]);
    expect(config!.egress.allowed_addresses).toEqual(['127.0.0.1', '10.0.0.0/8', '::1']);
  });

  it.each([
    ['a stdio server without a command', 'mcp:\n  servers:\n    - name: fs\n      transport: stdio\n', 'FORGE_CONFIG_MISSING_FIELD', 5, 'missing required field "mcp.servers[0].command"'],
    ['an http server without a url', 'mcp:\n  servers:\n    - name: docs\n      transport: http\n', 'FORGE_CONFIG_MISSING_FIELD', 5, 'missing required field "mcp.servers[0].url"'],
    ['a server name with capitals', 'mcp:\n  servers:\n    - name: FileSystem\n      transport: stdio\n      command: x\n', 'FORGE_CONFIG_VALUE', 5, '"mcp.servers[0].name" has an invalid value "FileSystem"'],
    ['an unknown transport', 'mcp:\n  servers:\n    - name: fs\n      transport: sse\n      command: x\n', 'FORGE_CONFIG_VALUE', 6, '"mcp.servers[0].transport" must be one of stdio, http (got "sse")'],
    ['a url on a stdio server', 'mcp:\n  servers:\n    - name: fs\n      transport: stdio\n      command: x\n      url: http://x\n', 'FORGE_CONFIG_VALUE', 8, '"url" of MCP server "fs" is only used with transport http'],
    ['a server defined twice', 'mcp:\n  servers:\n    - { name: fs, transport: stdio, command: x }\n    - { name: fs, transport: stdio, command: y }\n', 'FORGE_CONFIG_DUPLICATE', 6, 'MCP server "fs" is defined twice'],
    ['a timeout without a unit', 'mcp:\n  servers:\n    - { name: fs, transport: stdio, command: x, timeout: "5" }\n', 'FORGE_CONFIG_VALUE', 5, '"mcp.servers[0].timeout" has an invalid value "5"'],
    ['bearer auth without its variable', 'apis:\n  - name: p\n    spec: p.json\n    auth: { type: bearer }\n', 'FORGE_CONFIG_MISSING_FIELD', 6, 'missing required field "apis[0].auth.token_env"'],
    ['an API and a server of one name', 'mcp:\n  servers:\n    - { name: p, transport: stdio, command: x }\napis:\n  - { name: p, spec: p.json }\n', 'FORGE_CONFIG_DUPLICATE', 7, '"p" names both an MCP server and an API'],
    ['an allowed address that is not one', 'egress:\n  allowed_addresses: ["300.1.1.1"]\n', 'FORGE_CONFIG_VALUE', 4, '"egress.allowed_addresses[0]" is not an IP address or CIDR range: "300.1.1.1"'],
    ['an allowed address with a port past 65535', 'egress:\n  allowed_addresses: ["127.0.0.1:8080", "[::1]:8080", "127.0.0.1:70000"]\n', 'FORGE_CONFIG_VALUE', 4, '"egress.allowed_addresses[2]" is not an IP address or CIDR range: "127.0.0.1:70000"'],
  ])('reports %s at its line', async (_what, body, code, line, message) => {
    const { diagnostics } = await load(`${head}${body}`);
    const d = diagnostics.find((x) => x.code === code);
    expect(d, JSON.stringify(diagnostics, null, 1)).toBeDefined();
    expect(d!.message).toBe(message);
    expect(d!.line).toBe(line);
  });

  it('accepts allowed addresses with a port, IPv4 and bracketed IPv6', async () => {
    const { diagnostics } = await load(`${head}egress:\n  allowed_addresses: ["127.0.0.1:8080", "[::1]:8080", "10.0.0.0/8", "::1"]\n`);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('points a duplicate at its first definition with a note', async () => {
    const { diagnostics } = await load(`${head}mcp:\n  servers:\n    - { name: fs, transport: stdio, command: x }\n    - { name: fs, transport: stdio, command: y }\napis:\n  - { name: fs, spec: p.json }\n`);
    const twice = diagnostics.find((x) => x.message === 'MCP server "fs" is defined twice');
    expect(twice).toMatchObject({ line: 6, notes: [{ text: 'first defined here', line: 5 }] });
    const both = diagnostics.find((x) => x.message === '"fs" names both an MCP server and an API');
    expect(both).toMatchObject({ line: 8, notes: [{ text: 'the MCP server', line: 5 }] });
  });
});
