import type { ModelProvider, ModelRequest } from '../../domain/email/model.port.js';
import { inSpan, SpanKind } from '../tracing.js';

/**
 * `model` with every call in a CLIENT span (OpenTelemetry generative-AI conventions): `chat <model>`, with
 * `gen_ai.operation.name` `chat`, `gen_ai.provider.name` (`openai-compatible` or `sandbox`), `gen_ai.request.model`,
 * the prompt's and the answer's sizes in characters (`switchboard.prompt_chars`, `switchboard.answer_chars`; never
 * their text, which is customers' mail), and an error status when the call throws. Used only while tracing is on.
 */
export function tracedModel(model: ModelProvider): ModelProvider {
  return {
    name: model.name,
    complete(request: ModelRequest) {
      return inSpan(
        `chat ${request.model}`,
        SpanKind.CLIENT,
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': model.name,
          'gen_ai.request.model': request.model,
          'switchboard.prompt_chars': request.system.length + request.prompt.length,
        },
        async (span) => {
          const text = await model.complete(request);
          span.setAttribute('switchboard.answer_chars', text.length);
          return text;
        },
      );
    },
  };
}
