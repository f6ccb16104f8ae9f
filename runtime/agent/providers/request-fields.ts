/** model.extra_body and the fields Forge writes itself: no imports, so forge.yaml's check loads no HTTP client. */

/**
 * The fields Forge writes in a request of either format, from its own settings and the turn: model.extra_body
 * may not set them (forge.yaml refuses them, stages/config/model-config.ts). Some are written only at times
 * (system, tools, temperature, stream_options, max_tokens or max_completion_tokens), so merely writing over
 * them would let extra_body's stand where Forge sends none.
 */
/**
 * The max_tokens Forge sends Anthropic when model.max_tokens is unset (the messages API requires one). Not
 * more by default: Anthropic counts a request's max_tokens against the output tokens a minute an account
 * may use when the request starts (8,000 for Sonnet and Opus at the first tier), so a larger default would
 * refuse every request of a new account. Here, not in anthropic.ts, so forge.yaml's thinking check reads it.
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export const FORGE_REQUEST_FIELDS: readonly string[] = ['model', 'messages', 'system', 'tools', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature'];

/**
 * model.extra_body as it is sent: its fields but Forge's own. An agent.json edited by hand is not checked as
 * forge.yaml is: a system prompt or tools there never reach the model (nor get Anthropic's cache marks), and
 * anything but a mapping adds nothing.
 */
export function extraFields(extraBody: unknown): Record<string, unknown> {
  if (typeof extraBody !== 'object' || extraBody === null || Array.isArray(extraBody)) return {};
  return Object.fromEntries(Object.entries(extraBody).filter(([key]) => !FORGE_REQUEST_FIELDS.includes(key)));
}
