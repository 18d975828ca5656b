import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import type { ModelProvider, ModelRequest } from '../../domain/email/model.port.js';

/** Timeout of one model call (ms). */
export const MODEL_TIMEOUT_MS = 60_000;

/**
 * A model provider for any OpenAI-compatible chat-completions endpoint (`LLM_BASE_URL`, `LLM_API_KEY`) through the
 * AI SDK. With no base URL every call fails with `LLM_NOT_CONFIGURED` (the job then retries and fails visibly).
 */
export class OpenAICompatibleModel implements ModelProvider {
  readonly name = 'openai-compatible';
  readonly #provider;

  constructor(baseURL: string | undefined, apiKey: string | undefined) {
    this.#provider = baseURL ? createOpenAICompatible({ name: 'switchboard-llm', baseURL, apiKey }) : undefined;
  }

  /** @throws on HTTP/protocol errors, timeouts and empty answers. */
  async complete(request: ModelRequest): Promise<string> {
    if (!this.#provider) throw new Error('LLM_NOT_CONFIGURED: LLM_BASE_URL is not set');
    const { text } = await generateText({
      model: this.#provider.chatModel(request.model),
      system: request.system,
      prompt: request.prompt,
      maxRetries: 0, // retries are durable rows (MODEL_RETRY_DELAYS_MS), not in-process loops
      abortSignal: AbortSignal.timeout(MODEL_TIMEOUT_MS),
    });
    if (text.trim() === '') throw new Error('EMPTY_COMPLETION: the model returned no text');
    return text.trim();
  }
}
