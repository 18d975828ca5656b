/**
 * The model port of the email area: how an agent's answer is produced (spec 6.3 step 3). Implemented in
 * `src/infra/model/` (an OpenAI-compatible HTTP client; a deterministic offline sandbox).
 */

/** What the agent responder asks the model. */
export interface ModelRequest {
  /** The agent's `textModel` (a model name at the provider). */
  model: string;
  /** System instructions (the agent's instructions and rules). */
  system: string;
  /** The user prompt: the message, the thread, SMS/call context and knowledge passages, as text. */
  prompt: string;
}

/** The model provider port. */
export interface ModelProvider {
  /** Name shown in logs and answers (e.g. `openai-compatible`, `sandbox`). */
  readonly name: string;
  /**
   * Produces the answer text (trimmed, non-empty).
   * @throws on transport or protocol errors, timeouts (MODEL_TIMEOUT_MS) and empty answers; the caller retries
   * durably (MODEL_RETRY_DELAYS_MS).
   */
  complete(request: ModelRequest): Promise<string>;
}
