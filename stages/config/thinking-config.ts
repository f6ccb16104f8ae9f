/**
 * Anthropic's extended thinking, asked for in model.extra_body (`thinking: { type: enabled, budget_tokens: N }`):
 * Anthropic refuses with a 400 every request whose budget_tokens is under 1024, not an integer, or not below the
 * request's max_tokens — and with thinking on, any temperature but 1. Forge sends the same fields each time, so
 * a budget wrong in forge.yaml fails every run; it is refused at load instead.
 */
import type { ModelRef, ModelSettings } from '../../runtime/manifest.ts';
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../../runtime/agent/providers/request-fields.ts';
import type { PathSegment, YamlSource } from './yaml-source.ts';

const MIN_BUDGET = 1024;

export function checkThinking(ref: ModelRef, model: ModelSettings, path: readonly PathSegment[], name: string, source: YamlSource): Diagnostic[] {
  const thinking = ref.provider === 'anthropic' ? ref.extra_body?.thinking : undefined;
  if (typeof thinking !== 'object' || thinking === null || (thinking as { type?: unknown }).type !== 'enabled') return [];
  const budget = (thinking as { budget_tokens?: unknown }).budget_tokens;
  const at = [...path, 'extra_body', 'thinking'];
  const field = `${name}.extra_body.thinking.budget_tokens`;
  if (budget === undefined) return [error('FORGE_CONFIG_MISSING_FIELD', `"${name}.extra_body.thinking" enables thinking without budget_tokens, which Anthropic requires`, source.locate(at, 'key'), `add budget_tokens: ${MIN_BUDGET} (at least ${MIN_BUDGET}, below model.max_tokens)`)];
  if (typeof budget !== 'number' || !Number.isInteger(budget)) return [error('FORGE_CONFIG_TYPE', `"${field}" must be a whole number of tokens`, source.locate([...at, 'budget_tokens']), `write e.g. budget_tokens: ${MIN_BUDGET}`)];
  const diagnostics: Diagnostic[] = [];
  const maxTokens = model.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  if (budget < MIN_BUDGET) {
    diagnostics.push(error('FORGE_CONFIG_VALUE', `"${field}" is ${budget}; Anthropic refuses a thinking budget under ${MIN_BUDGET} tokens`, source.locate([...at, 'budget_tokens']), `raise ${field} to at least ${MIN_BUDGET}`));
  } else if (budget >= maxTokens) {
    const sent = model.max_tokens === undefined ? `Forge sends max_tokens: ${ANTHROPIC_DEFAULT_MAX_TOKENS} when model.max_tokens is unset` : `model.max_tokens is ${maxTokens}`;
    diagnostics.push(error('FORGE_CONFIG_VALUE', `"${field}" is ${budget}, not below the request's max_tokens (${sent}); Anthropic refuses every such request`, source.locate([...at, 'budget_tokens']), `set model.max_tokens above ${budget}, or lower ${field} below ${maxTokens}`));
  }
  if (model.temperature !== undefined && model.temperature !== 1) {
    diagnostics.push(error('FORGE_CONFIG_VALUE', `model.temperature is ${model.temperature}, but "${name}" thinks (extra_body.thinking), and Anthropic refuses any temperature but 1 with thinking on`, source.locate(['model', 'temperature']), 'remove model.temperature (it applies to every model of the chain), or set it to 1'));
  }
  return diagnostics;
}
