/**
 * The model client from agent.json's `model:`: the main model, then each
 * fallback in order when one fails (each asked again first on a failure that
 * may pass: retries.ts). API keys come from the environment, or a file its <NAME>_FILE variable names.
 */
import type { ModelRef, ModelSettings } from '../../manifest.ts';
import type { HttpClient } from '../../net/http-client.ts';
import { ProviderError, type ModelProvider, type ModelRequest, type ModelResponse } from '../messages.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { secretFromEnv } from '../../secrets.ts';
import { createOpenAIProvider } from './openai.ts';
import { tracedModel } from '../../telemetry/instrument-model.ts';
import { withRetries, type RetryNotice } from './retries.ts';
import { ContextTooLongError, withWindow } from '../context-window.ts';

const DEFAULT_KEY_ENV = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

export function createProvider(ref: ModelRef, http: HttpClient, env: NodeJS.ProcessEnv): ModelProvider {
  // <NAME>_FILE names a file holding the key (a mounted secret), so it need not sit in the environment;
  // one that cannot be read is the key's problem, coded as a key not set is.
  const apiKey = secretFromEnv(env, ref.api_key_env ?? DEFAULT_KEY_ENV[ref.provider], 'FORGE_MODEL_KEY');
  const options = { model: ref.name, baseUrl: ref.base_url, apiKey, http, extraBody: ref.extra_body };
  return ref.provider === 'anthropic' ? createAnthropicProvider({ ...options, promptCache: ref.prompt_cache }) : createOpenAIProvider(options);
}

/** The variables the model chain's keys are read from (or NAME_FILE of each). */
export function modelKeyVariables(settings: ModelSettings): string[] {
  return [settings, ...(settings.fallbacks ?? [])].map((ref) => ref.api_key_env ?? DEFAULT_KEY_ENV[ref.provider]);
}

export interface MissingKey {
  model: string;
  variable: string;
}

/**
 * Models whose API key variable is unset, and its _FILE variable too. A model with its own base_url (a
 * local server, a proxy) may need no key, so only models on a provider's
 * own endpoint are counted.
 */
export function missingApiKeys(settings: ModelSettings, env: NodeJS.ProcessEnv = process.env): MissingKey[] {
  return [settings, ...(settings.fallbacks ?? [])]
    .filter((ref) => !ref.base_url)
    .map((ref) => ({ model: `${ref.provider}:${ref.name}`, variable: ref.api_key_env ?? DEFAULT_KEY_ENV[ref.provider] }))
    // NAME_FILE naming a file is a key too (secretFromEnv reads it; one it cannot read fails at start, saying so).
    .filter(({ variable }) => !env[variable] && !env[`${variable}_FILE`]?.trim());
}

export interface ModelClient extends ModelProvider {
  /** Every model in the order they are tried. */
  readonly chain: readonly string[];
}

/** What a model client reports as it goes: asking a model again, and moving on to the next. */
export interface ModelNotices {
  retry?: RetryNotice;
  fallback?: FallbackNotice;
}

/** `request`: the one the next model is asked, whose task and conversation the notice names. */
export type FallbackNotice = (failed: string, error: Error, request: ModelRequest) => void;

export function createModelClient(settings: ModelSettings, http: HttpClient, env: NodeJS.ProcessEnv = process.env, notices: ModelNotices = {}): ModelClient {
  // Each model is traced on its own, each try too, so a retry or a fallback shows as a failed call and the next one.
  // Each learns its own context window: a fallback's may be smaller than the main model's, or larger.
  const providers = [settings, ...(settings.fallbacks ?? [])].map((ref) => withWindow(withRetries(tracedModel(createProvider(ref, http, env)), notices.retry)));
  return withFallbacks(providers, notices.fallback);
}

export function withFallbacks(providers: readonly ModelProvider[], onFallback?: FallbackNotice): ModelClient {
  return {
    label: providers[0]?.label ?? 'none',
    chain: providers.map((p) => p.label),
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const failures: Error[] = [];
      for (const [index, provider] of providers.entries()) {
        try {
          return await provider.complete(request);
        } catch (err) {
          if (request.signal?.aborted) throw err;
          // Text already streamed to the caller cannot be taken back: another model would repeat it.
          if (err instanceof ProviderError && err.streamed) throw err;
          // One model and no fallback: its own error, with no talk of fallbacks that do not exist.
          if (providers.length === 1) throw err;
          failures.push(err as Error);
          if (index < providers.length - 1) onFallback?.(provider.label, err as Error, request);
        }
      }
      // The turn too long for every model: FORGE_MODEL_CONTEXT, as with one model.
      if (failures.every((f) => f instanceof ContextTooLongError)) throw failures[0];
      throw new ProviderError('models', `every model failed: ${failures.map((f) => f.message).join('; ')}`);
    },
  };
}
