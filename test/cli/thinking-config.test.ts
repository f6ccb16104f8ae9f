import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

// Anthropic refuses with a 400 every request whose thinking budget is under 1024 or not below max_tokens,
// and any temperature but 1 with thinking on: forge.yaml's model settings are checked before a bundle ships.
const claude = (thinking: string, settings = '') => minimalConfig(`model:\n  provider: anthropic\n  name: claude-sonnet-4-5\n${settings}  extra_body:\n    thinking: ${thinking}\n`);

describe("forge.yaml's Anthropic thinking budget (model.extra_body.thinking)", () => {
  it.each([
    ['a budget not below the max_tokens Forge sends when model.max_tokens is unset (4096)', claude('{ type: enabled, budget_tokens: 4096 }'), 'forge.yaml:8:47 FORGE_CONFIG_VALUE "model.extra_body.thinking.budget_tokens" is 4096, not below the request\'s max_tokens (Forge sends max_tokens: 4096 when model.max_tokens is unset)', 'hint: set model.max_tokens above 4096, or lower model.extra_body.thinking.budget_tokens below 4096'],
    ['a budget not below model.max_tokens', claude('{ type: enabled, budget_tokens: 8000 }', '  max_tokens: 8000\n'), 'forge.yaml:9:47 FORGE_CONFIG_VALUE "model.extra_body.thinking.budget_tokens" is 8000, not below the request\'s max_tokens (model.max_tokens is 8000)', 'hint: set model.max_tokens above 8000'],
    ['a budget under 1024', claude('{ type: enabled, budget_tokens: 512 }'), 'forge.yaml:8:47 FORGE_CONFIG_VALUE "model.extra_body.thinking.budget_tokens" is 512; Anthropic refuses a thinking budget under 1024 tokens', 'hint: raise model.extra_body.thinking.budget_tokens to at least 1024'],
    ['a budget that is not a whole number', claude('{ type: enabled, budget_tokens: 2048.5 }'), 'forge.yaml:8:47 FORGE_CONFIG_TYPE "model.extra_body.thinking.budget_tokens" must be a whole number of tokens', 'hint: write e.g. budget_tokens: 1024'],
    ['no budget', claude('{ type: enabled }'), 'forge.yaml:8:5 FORGE_CONFIG_MISSING_FIELD "model.extra_body.thinking" enables thinking without budget_tokens', 'hint: add budget_tokens: 1024'],
    ['a temperature other than 1', claude('{ type: enabled, budget_tokens: 2048 }', '  temperature: 0.2\n'), 'forge.yaml:7:16 FORGE_CONFIG_VALUE model.temperature is 0.2, but "model" thinks (extra_body.thinking)', 'hint: remove model.temperature'],
    [
      "a fallback's budget (model.max_tokens applies to every model of the chain)",
      minimalConfig('model:\n  provider: openai\n  name: gpt-5\n  fallbacks:\n    - provider: anthropic\n      name: claude-haiku-4-5\n      extra_body:\n        thinking:\n          type: enabled\n          budget_tokens: 5000\n'),
      'forge.yaml:13:26 FORGE_CONFIG_VALUE "model.fallbacks[0].extra_body.thinking.budget_tokens" is 5000, not below the request\'s max_tokens (Forge sends max_tokens: 4096',
      'hint: set model.max_tokens above 5000, or lower model.fallbacks[0].extra_body.thinking.budget_tokens below 4096',
    ],
  ])('forge validate refuses %s, at the value, naming the setting to change', async (_, config, message, hint) => {
    const { code, stderr } = await forge(['validate'], writeProject({ 'forge.yaml': config }));
    expect(code).toBe(1);
    expect(stderr).toContain(message);
    expect(stderr).toContain(hint);
  });

  it('forge build refuses a budget Anthropic would refuse, and builds once model.max_tokens is above it', async () => {
    const dir = writeProject({ 'forge.yaml': claude('{ type: enabled, budget_tokens: 6000 }') });
    const refused = await forge(['build'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('forge.yaml:8:47 FORGE_CONFIG_VALUE "model.extra_body.thinking.budget_tokens" is 6000');
    const fixed = writeProject({ 'forge.yaml': claude('{ type: enabled, budget_tokens: 6000 }', '  max_tokens: 8000\n  temperature: 1\n') });
    const built = await forge(['build'], fixed);
    expect(built.stderr).not.toContain('FORGE_CONFIG');
    expect(built.code).toBe(0);
  });

  it('leaves thinking alone on an OpenAI-format model (another server, other rules) and when it is not enabled', async () => {
    const openai = minimalConfig('model:\n  provider: openai\n  name: qwen3\n  temperature: 0.2\n  extra_body:\n    thinking: { type: enabled, budget_tokens: 100 }\n');
    expect((await forge(['validate'], writeProject({ 'forge.yaml': openai }))).code).toBe(0);
    expect((await forge(['validate'], writeProject({ 'forge.yaml': claude('{ type: disabled }') }))).code).toBe(0);
  });
});
