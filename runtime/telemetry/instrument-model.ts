/**
 * Model calls as spans ("chat <model>", GenAI semantic conventions) and
 * metrics: every attempt is one span, so a fallback shows as a failed call
 * followed by the next model's. A call its caller stopped counts as
 * `canceled`, and its span is no error (an event says canceled): the
 * model's error rate is the provider's failures.
 */
import type { ModelProvider, ModelRequest, ModelResponse } from '../agent/messages.ts';
import { modelCalls, modelDuration, modelTokens } from './forge-metrics.ts';
import { traceContent } from './trace-content.ts';
import { inSpan } from './tracer.ts';

export function tracedModel<P extends ModelProvider>(provider: P): P {
  const [system, ...rest] = provider.label.split(':');
  const model = rest.join(':') || provider.label;
  const complete = async (request: ModelRequest): Promise<ModelResponse> => {
    const started = performance.now();
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': system,
      'gen_ai.system': system,
      'gen_ai.request.model': model,
      'gen_ai.request.max_tokens': request.maxTokens,
      'gen_ai.request.temperature': request.temperature,
      'forge.model.streaming': request.onText !== undefined,
    };
    try {
      const response = await inSpan(`chat ${model}`, attributes, async (span) => {
        span.setAttribute('gen_ai.input.messages', traceContent(request.messages));
        const response = await provider.complete(request).catch((err: unknown) => {
          if (request.signal?.aborted) span.addEvent('forge.model.canceled');
          throw err;
        });
        span.setAttributes({
          'gen_ai.response.model': response.model.split(':').slice(1).join(':') || response.model,
          'gen_ai.response.finish_reasons': [response.stopReason],
          'gen_ai.usage.input_tokens': response.usage?.inputTokens,
          'gen_ai.usage.output_tokens': response.usage?.outputTokens,
          'gen_ai.usage.cache_read.input_tokens': response.usage?.cacheReadTokens,
          'gen_ai.usage.cache_creation.input_tokens': response.usage?.cacheWriteTokens,
          'forge.model.tool_calls': response.toolCalls.length,
          'gen_ai.output.messages': traceContent({ text: response.text, toolCalls: response.toolCalls }),
        });
        return response;
      }, { kind: 'client', notAnError: () => request.signal?.aborted === true });
      modelCalls.inc({ model: provider.label, outcome: 'ok' });
      if (response.usage) {
        modelTokens.inc({ model: provider.label, type: 'input' }, response.usage.inputTokens);
        modelTokens.inc({ model: provider.label, type: 'output' }, response.usage.outputTokens);
        if (response.usage.cacheReadTokens) modelTokens.inc({ model: provider.label, type: 'cache_read' }, response.usage.cacheReadTokens);
        if (response.usage.cacheWriteTokens) modelTokens.inc({ model: provider.label, type: 'cache_write' }, response.usage.cacheWriteTokens);
      }
      return response;
    } catch (err) {
      // A call its caller stopped (a canceled turn, a stopping process) is no failure of the model's.
      modelCalls.inc({ model: provider.label, outcome: request.signal?.aborted ? 'canceled' : 'error' });
      throw err;
    } finally {
      modelDuration.observe({ model: provider.label }, (performance.now() - started) / 1000);
    }
  };
  return Object.assign(Object.create(provider) as P, { complete, label: provider.label });
}
