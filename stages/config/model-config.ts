/**
 * forge.yaml's `model.extra_body` (and each fallback's): fields added to
 * every request for settings Forge has no name for. The fields Forge writes
 * itself are refused there: the request would carry Forge's value anyway,
 * so the setting would be silently lost. Anthropic's thinking budget is checked
 * against the max_tokens sent (thinking-config.ts).
 */
import type { ModelRef, ModelSettings } from '../../runtime/manifest.ts';
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { FORGE_REQUEST_FIELDS as FORGE_FIELDS } from '../../runtime/agent/providers/request-fields.ts';
import type { YamlSource } from './yaml-source.ts';
import { checkThinking } from './thinking-config.ts';

/** Forge's own setting for a field it writes, where it has one. */
const OWN_SETTING: Record<string, string> = { max_tokens: 'max_tokens', max_completion_tokens: 'max_tokens', temperature: 'temperature' };

export function checkModelConfig(model: ModelSettings | undefined, source: YamlSource): Diagnostic[] {
  if (!model) return [];
  const refs: [ModelRef, (string | number)[], string][] = [[model, ['model'], 'model'], ...(model.fallbacks ?? []).map((ref, i): [ModelRef, (string | number)[], string] => [ref, ['model', 'fallbacks', i], `model.fallbacks[${i}]`])];
  const diagnostics: Diagnostic[] = [];
  for (const [ref, path, name] of refs) {
    diagnostics.push(...checkThinking(ref, model, path, name, source));
    for (const field of Object.keys(ref.extra_body ?? {}).filter((key) => FORGE_FIELDS.includes(key))) {
      const own = OWN_SETTING[field];
      diagnostics.push(
        error(
          'FORGE_CONFIG_VALUE',
          `"${name}.extra_body" sets "${field}", which Forge writes in every request itself`,
          source.locate([...path, 'extra_body', field], 'key'),
          own ? `set model.${own} instead: it applies to every model of the chain` : `extra_body adds fields Forge does not write; Forge's own are ${FORGE_FIELDS.join(', ')}`,
        ),
      );
    }
  }
  return diagnostics;
}
