import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../stages/config/load-config.ts';
import { collectEndpoints, deriveEgress, shippedToolEndpoints } from '../../stages/derive-egress.ts';

async function derive(yaml: string, apis: { name: string; base_url: string }[] = []) {
  const { config, diagnostics } = await loadConfigText('/p/forge.yaml', `agent_id: a\nversion: 1.0.0\n${yaml}`, '/p');
  expect(diagnostics).toEqual([]);
  return deriveEgress(config!.egress, collectEndpoints(config!, await shippedToolEndpoints(config!), apis.map((a) => ({ ...a, spec: 'x', timeout_ms: 1 }))));
}

describe('the egress the build derives', () => {
  it('adds every host the agent needs to the allowlist, and says where each came from', async () => {
    const { egress, derived } = await derive(
      `model: { provider: openai, name: gpt-4o-mini, fallbacks: [{ provider: anthropic, name: claude }] }
mcp:
  servers:
    - { name: docs, transport: http, url: "https://mcp.docs.example.com/mcp" }
    - { name: fs, transport: stdio, command: npx }
apis:
  - { name: petstore, spec: p.json }
tools:
  - web_search
  - name: webhook_call
    config: { webhooks: { deploy: "https://ci.example.com/hooks/deploy" } }
egress: { mode: allowlist, allowed_domains: [api.github.com] }
`,
      [{ name: 'petstore', base_url: 'http://petstore.swagger.io/v2' }],
    );
    expect(egress.allowed_domains).toEqual(['api.anthropic.com', 'api.github.com', 'api.openai.com', 'api.perplexity.ai', 'api.tavily.com', 'ci.example.com', 'mcp.docs.example.com', 'petstore.swagger.io']);
    expect(egress.allowed_addresses).toEqual([]);
    expect(derived).toContainEqual({ entry: 'mcp.docs.example.com', from: 'mcp.servers[docs]' });
    expect(derived).toContainEqual({ entry: 'api.anthropic.com', from: 'model.fallbacks[0]' });
    expect(derived).toContainEqual({ entry: 'ci.example.com', from: 'webhook_call webhooks.deploy' });
  });

  it('adds only the chosen web_search provider when the tool names one', async () => {
    const { egress } = await derive('tools: [{ name: web_search, config: { provider: tavily } }]\n');
    expect(egress.allowed_domains).toEqual(['api.tavily.com']);
  });

  it("reaches web_search's provider where its config points, allowing that address as written", async () => {
    const { egress, derived } = await derive('tools: [{ name: web_search, config: { provider: tavily, tavily_base_url: "http://10.0.0.5:8080" } }]\n');
    expect(egress.allowed_domains).toEqual([]);
    expect(egress.allowed_addresses).toEqual(['10.0.0.5:8080']);
    expect(derived).toEqual([{ entry: '10.0.0.5:8080', from: 'web_search tavily_base_url' }]);
  });

  it('allows a private address written in forge.yaml, and only that one, on its port only', async () => {
    const { egress } = await derive(`model: { provider: openai, name: llama3, base_url: "http://127.0.0.1:11434/v1" }
mcp:
  servers:
    - { name: local, transport: http, url: "http://localhost:3001/mcp" }
`);
    expect(egress.allowed_domains).toEqual(['localhost']);
    // Not the whole machine: the agent's own port or an admin server beside the model stays closed.
    expect(egress.allowed_addresses).toEqual(['127.0.0.1:11434', '127.0.0.1:3001', '[::1]:3001']);
    const defaultPorts = await derive('model: { provider: openai, name: m, base_url: "http://10.9.8.7/v1" }\nmcp:\n  servers:\n    - { name: v6, transport: http, url: "https://[fd00::5]/mcp" }\n');
    expect(defaultPorts.egress.allowed_addresses).toEqual(['10.9.8.7:80', '[fd00::5]:443']);
  });

  it('does not allow a private address that comes from an OpenAPI document, and says every call to it would be refused', async () => {
    const { egress, diagnostics } = await derive('apis:\n  - { name: internal, spec: p.json }\n', [{ name: 'internal', base_url: 'http://10.1.2.3/api' }]);
    expect(egress.allowed_addresses).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_EGRESS_PRIVATE', message: 'apis[internal] reaches http://10.1.2.3/api, which is not a public address and is not written in forge.yaml: the egress policy will refuse every call to it', hint: 'write it in forge.yaml (base_url: http://10.1.2.3/api), where a non-public address is allowed as written, or list 10.1.2.3:80 in egress.allowed_addresses' }]);
    // Allowed by hand (a range), or public: nothing to say.
    expect((await derive('egress: { allowed_addresses: [10.1.0.0/16] }\napis:\n  - { name: internal, spec: p.json }\n', [{ name: 'internal', base_url: 'http://10.1.2.3/api' }])).diagnostics).toEqual([]);
    expect((await derive('apis:\n  - { name: pets, spec: p.json }\n', [{ name: 'pets', base_url: 'https://pets.example.com/v1' }])).diagnostics).toEqual([]);
    // localhost: the hint names the addresses it stands for, and allowing them is enough.
    const local = await derive('apis:\n  - { name: local, spec: p.json }\n', [{ name: 'local', base_url: 'http://localhost:8080/v1' }]);
    expect(local.diagnostics).toMatchObject([{ code: 'FORGE_EGRESS_PRIVATE', hint: expect.stringContaining('list 127.0.0.1:8080 and [::1]:8080 in egress.allowed_addresses') }]);
    expect((await derive('egress: { allowed_addresses: [127.0.0.1, "::1"] }\napis:\n  - { name: local, spec: p.json }\n', [{ name: 'local', base_url: 'http://localhost:8080/v1' }])).diagnostics).toEqual([]);
    expect((await derive('egress: { allowed_addresses: ["127.0.0.1:8080"] }\napis:\n  - { name: local, spec: p.json }\n', [{ name: 'local', base_url: 'http://localhost:8080/v1' }])).diagnostics).toEqual([]);
    // Allowed on another port only: every call would still be refused.
    expect((await derive('egress: { allowed_addresses: ["127.0.0.1:9", "[::1]:9"] }\napis:\n  - { name: local, spec: p.json }\n', [{ name: 'local', base_url: 'http://localhost:8080/v1' }])).diagnostics).toMatchObject([{ code: 'FORGE_EGRESS_PRIVATE' }]);
  });

  it('leaves deny-all alone and warns about each endpoint it will refuse', async () => {
    const { egress, diagnostics } = await derive('egress: { mode: deny-all }\nmcp:\n  servers:\n    - { name: docs, transport: http, url: "https://mcp.example.com/mcp" }\n');
    expect(egress).toEqual({ mode: 'deny-all', allowed_domains: [], allowed_addresses: [] });
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_EGRESS_DENY_ALL', message: 'egress.mode is deny-all, so mcp.servers[docs] (mcp.example.com) cannot be reached' }]);
  });

  it('warns when a host is only known at run time', async () => {
    const { diagnostics } = await derive('mcp:\n  servers:\n    - { name: docs, transport: http, url: "https://${MCP_HOST}/mcp" }\n');
    expect(diagnostics).toMatchObject([{ code: 'FORGE_EGRESS_UNKNOWN', hint: 'list it in egress.allowed_domains' }]);
  });

  it('keeps open mode open, but still allows the private endpoints written in forge.yaml', async () => {
    const { egress } = await derive('egress: { mode: open }\nmodel: { provider: openai, name: m, base_url: "http://127.0.0.1:8000/v1" }\n');
    expect(egress).toEqual({ mode: 'open', allowed_domains: [], allowed_addresses: ['127.0.0.1:8000'] });
  });
});
