import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../stages/config/load-config.ts';

const load = (text: string) => loadConfigText('/project/forge.yaml', text, '/project');

describe('loadConfig: valid forge.yaml', () => {
  it('applies defaults and resolves paths against the project root', async () => {
    const { config, diagnostics } = await load('agent_id: support-agent\nversion: 0.1.0\n');
    expect(diagnostics).toEqual([]);
    expect(config).toMatchObject({
      agentId: 'support-agent',
      version: '0.1.0',
      description: '',
      root: '/project',
      workDir: '/project',
      tools: [],
      envPassthrough: [],
      egress: { mode: 'allowlist', allowed_domains: [] },
      approval: { auto_approve: ['tag:read'], auto_deny: [] },
      server: { port: 8080, host: '127.0.0.1' },
    });
    expect(config!.toolDirs).toMatchObject([{ path: 'tools', absolute: '/project/tools', explicit: false }]);
  });

  it('reads the handbook example', async () => {
    const text = `agent_id: support-agent
version: 0.1.0
description: Answers questions about our services.
model:
  provider: openai
  name: gpt-4o-mini
  base_url: http://127.0.0.1:11434/v1
  api_key_env: OPENAI_API_KEY
  fallbacks: [{ provider: anthropic, name: claude-sonnet-4-5 }]
workdir: ./work
tool_dirs: [tools, more/tools]
tools:
  - http_request
  - name: cli_execute
    config: { allowed_binaries: [git, jq], env_passthrough: [GITHUB_TOKEN], timeout: 60 }
egress: { mode: allowlist, allowed_domains: [api.github.com, "*.example.com"] }
approval: { auto_approve: ["tag:read"], auto_deny: ["name:local_shell"] }
`;
    const { config, diagnostics } = await load(text);
    expect(diagnostics).toEqual([]);
    expect(config!.model).toMatchObject({ provider: 'openai', fallbacks: [{ provider: 'anthropic', name: 'claude-sonnet-4-5' }] });
    expect(config!.workDir).toBe('/project/work');
    expect(config!.toolDirs.map((d) => d.absolute)).toEqual(['/project/tools', '/project/more/tools']);
    expect(config!.tools).toMatchObject([
      { name: 'http_request', at: { line: 13, column: 5 } },
      { name: 'cli_execute', config: { allowed_binaries: ['git', 'jq'] }, at: { line: 14, column: 11 } },
    ]);
  });
});

describe('loadConfig: model settings', () => {
  it('takes prompt_cache on a model and on each fallback', async () => {
    const { config, diagnostics } = await load('agent_id: a\nversion: 1.0.0\nmodel:\n  provider: anthropic\n  name: claude-sonnet-4-5\n  prompt_cache: false\n  fallbacks: [{ provider: anthropic, name: claude-haiku-4-5, prompt_cache: true }]\n');
    expect(diagnostics).toEqual([]);
    expect(config!.model).toMatchObject({ prompt_cache: false, fallbacks: [{ prompt_cache: true }] });
  });

  it('takes extra_body on a model and on each fallback, as written', async () => {
    const { config, diagnostics } = await load('agent_id: a\nversion: 1.0.0\nmodel:\n  provider: openai\n  name: gpt-5\n  extra_body: { reasoning_effort: low, chat_template_kwargs: { enable_thinking: false } }\n  fallbacks:\n    - provider: anthropic\n      name: claude-sonnet-4-5\n      extra_body:\n        thinking: { type: enabled, budget_tokens: 2048 }\n');
    expect(diagnostics).toEqual([]);
    expect(config!.model).toMatchObject({
      extra_body: { reasoning_effort: 'low', chat_template_kwargs: { enable_thinking: false } },
      fallbacks: [{ extra_body: { thinking: { type: 'enabled', budget_tokens: 2048 } } }],
    });
  });

  it("refuses in extra_body the fields Forge writes itself, at the field, naming the setting to use", async () => {
    const { config, diagnostics } = await load('agent_id: a\nversion: 1.0.0\nmodel:\n  provider: openai\n  name: gpt-5\n  extra_body:\n    max_completion_tokens: 100\n    messages: []\n  fallbacks:\n    - provider: anthropic\n      name: claude-sonnet-4-5\n      extra_body: { temperature: 1, top_k: 5 }\n');
    expect(config).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.line, d.column, d.message, d.hint])).toEqual([
      ['FORGE_CONFIG_VALUE', 7, 5, '"model.extra_body" sets "max_completion_tokens", which Forge writes in every request itself', 'set model.max_tokens instead: it applies to every model of the chain'],
      ['FORGE_CONFIG_VALUE', 8, 5, '"model.extra_body" sets "messages", which Forge writes in every request itself', expect.stringContaining("extra_body adds fields Forge does not write")],
      ['FORGE_CONFIG_VALUE', 12, 21, '"model.fallbacks[0].extra_body" sets "temperature", which Forge writes in every request itself', 'set model.temperature instead: it applies to every model of the chain'],
    ]);
  });
});

describe('loadConfig: errors name file:line:column, the field and a hint', () => {
  it.each([
    ['a misspelt key', 'agent_id: a\nversion: 1.0.0\ndescripton: x\n', 'FORGE_CONFIG_UNKNOWN_FIELD', 3, 1, 'did you mean "description"?'],
    ['a misspelt nested key', 'agent_id: a\nversion: 1.0.0\nmodel:\n  provider: openai\n  nmae: x\n', 'FORGE_CONFIG_UNKNOWN_FIELD', 5, 3, 'did you mean "name"?'],
    ['a bad enum value', 'agent_id: a\nversion: 1.0.0\nmodel:\n  provider: openia\n  name: x\n', 'FORGE_CONFIG_VALUE', 4, 13, 'did you mean "openai"?'],
    ['a version that is not semver', 'agent_id: a\nversion: one\n', 'FORGE_CONFIG_VALUE', 2, 10, 'use a semantic version such as 1.0.0 or 0.2.0-beta.1'],
    ['a version YAML reads as a number', 'agent_id: a\nversion: 1.0\n', 'FORGE_CONFIG_TYPE', 2, 10, 'quote the value if YAML reads it as a number or boolean, e.g. "1.0"'],
    ['an agent_id with capitals', 'agent_id: My Agent\nversion: 1.0.0\n', 'FORGE_CONFIG_VALUE', 1, 11, 'use lowercase letters, digits and dashes, e.g. support-agent'],
    ['a missing agent_id', 'version: 1.0.0\n', 'FORGE_CONFIG_MISSING_FIELD', 1, 1, 'add e.g. "agent_id: support-agent"'],
    ['tool_dirs that is not a list', 'agent_id: a\nversion: 1.0.0\ntool_dirs: tools\n', 'FORGE_CONFIG_TYPE', 3, 12, 'write a list, e.g. [a, b] or one "- item" per line'],
    ['a misspelt key in a tool entry', 'agent_id: a\nversion: 1.0.0\ntools:\n  - name: x\n    confg: {}\n', 'FORGE_CONFIG_UNKNOWN_FIELD', 5, 5, 'did you mean "config"?'],
    ['a bad approval rule', 'agent_id: a\nversion: 1.0.0\napproval:\n  auto_approve: [read]\n', 'FORGE_CONFIG_VALUE', 4, 18, 'rules look like tag:read, name:file_read or category:custom (globs allowed)'],
    ['an api key instead of its variable name', 'agent_id: a\nversion: 1.0.0\nmodel:\n  provider: openai\n  name: x\n  api_key_env: sk-123\n', 'FORGE_CONFIG_VALUE', 6, 16, undefined],
    ['a duplicate key', 'agent_id: a\nversion: 1.0.0\nagent_id: b\n', 'FORGE_YAML_SYNTAX', 3, 1, 'each key may appear once in a mapping'],
    ['broken YAML', 'agent_id: a\nversion: 1.0.0\ntools: [a, b\n', 'FORGE_YAML_SYNTAX', 3, undefined, undefined],
    // Pointed at where it opens, not at the next key, where the parser notices (with "check the indentation").
    ['a list never closed, before other keys', 'agent_id: a\nversion: 1.0.0\ntool_dirs: [tools\ntools:\n  - uuid_generate\n', 'FORGE_YAML_SYNTAX', 3, 12, 'close it with "]"'],
    // Brackets in comments and quoted strings do not count; one closed on an under-indented line is an indentation problem.
    ['a list never closed, a bracket in a comment before it and one in a string inside it', 'agent_id: a # see [x\nversion: 1.0.0\ntools: [uuid_generate, "x]y"\negress: { mode: open }\n', 'FORGE_YAML_SYNTAX', 3, 8, 'close it with "]"'],
    ['a list closed on an under-indented line', 'agent_id: a\nversion: 1.0.0\ntools: [uuid_generate,\nslugify]\n', 'FORGE_YAML_SYNTAX', 4, 1, 'check the indentation of this line against the lines above'],
    ['an outer list never closed around a closed inner one', 'agent_id: a\nversion: 1.0.0\ntool_dirs: [tools, [x]\nother: [a, b]\n', 'FORGE_YAML_SYNTAX', 3, 12, 'close it with "]"'],
    ['a map never closed, with a closed one before it', 'agent_id: a\nversion: 1.0.0\nmodel: { provider: openai, name: x }\negress: { mode: open\ntools: [uuid_generate]\n', 'FORGE_YAML_SYNTAX', 4, 9, 'close it with "}"'],
  ])('%s', async (_name, text, code, line, column, hint) => {
    const { config, diagnostics } = await load(text);
    expect(config).toBeUndefined();
    const d = diagnostics.find((x) => x.code === code);
    expect(d, JSON.stringify(diagnostics, null, 1)).toBeDefined();
    expect(d!.file).toBe('forge.yaml');
    expect(d!.line).toBe(line);
    if (column !== undefined) expect(d!.column).toBe(column);
    if (hint !== undefined) expect(d!.hint).toBe(hint);
    expect(d!.lineText).toBe(text.split('\n')[line - 1]);
  });

  it('reports all schema errors at once, in file order', async () => {
    const { diagnostics } = await load('agent_id: A\nversion: x\nfoo: 1\n');
    expect(diagnostics.map((d) => d.line)).toEqual([1, 2, 3]);
  });

  it('rejects a file that is not a mapping', async () => {
    expect((await load('- a\n- b\n')).diagnostics).toMatchObject([{ code: 'FORGE_CONFIG_SHAPE' }]);
  });
});
