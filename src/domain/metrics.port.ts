import type { StreamEndReason } from './events/event.js';

/**
 * The metrics port: what domain code and front doors count (docs/operations.md "Metrics"). Implemented with
 * prom-client in src/infra/metrics/prometheus.ts and exposed at GET /metrics; every method is cheap and never throws.
 */
export interface MetricsRecorder {
  /** One event recorded by this instance (counted in the recording transaction). */
  eventIngested(channel: string): void;
  /** A live stream (SSE or GraphQL subscription) opened: `switchboard_open_streams` + 1. */
  streamOpened(transport: 'sse' | 'graphql'): void;
  /**
   * A stream counted by {@link streamOpened} ended, once per stream (the caller guarantees once):
   * `switchboard_open_streams` − 1 and `switchboard_streams_ended_total{transport, reason}` + 1.
   */
  streamEnded(transport: 'sse' | 'graphql', reason: StreamEndReason): void;
  /** One webhook delivery attempt finished: delivered, retry (will be tried again), failed (final) or refused (SSRF guard). */
  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed' | 'refused'): void;
  /** One model call of an agent job, by provider (sandbox, openai-compatible) and outcome. */
  agentModelCall(provider: string, outcome: 'ok' | 'error', seconds: number): void;
}

/** A recorder that records nothing (tools and tests that build parts of the app without metrics). */
export const noMetrics: MetricsRecorder = {
  eventIngested() {},
  streamOpened() {},
  streamEnded() {},
  webhookAttempt() {},
  agentModelCall() {},
};
