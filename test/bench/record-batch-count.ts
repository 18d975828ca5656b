/**
 * Issue 24 round 8, counted in isolation: the service's CPU per delivery of the batched outcome record
 * (recordAttempts) up to the wire: building the statement and pg's `prepareValue` of each of its parameters, as
 * `pool.query` does before sending. `SRC` is the src/ directory whose recordAttempts is counted (default this
 * clone's), so two builds can be compared on one machine. Batches of 40 `delivered` outcomes; prints ns per
 * delivery (process.cpuUsage over `n` batches, best of `runs`).
 * Usage: `[SRC=/path/to/src] npx tsx test/bench/record-batch-count.ts [n] [runs]`. Measurement only.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AttemptRecord } from '../../src/domain/webhooks/webhook-dispatch.store.js';

const N = Number(process.argv[2] ?? 20_000);
const RUNS = Number(process.argv[3] ?? 5);
const src = process.env.SRC ?? new URL('../../src', import.meta.url).pathname;
const { recordAttempts } = (await import(`${src}/domain/webhooks/webhook-dispatch.store.ts`)) as {
  recordAttempts: (
    d: { preparedWrite: (t: string, v: unknown[]) => Promise<Record<string, unknown>[]> },
    rs: AttemptRecord[],
  ) => Promise<Set<string>>;
};
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };
let sink = 0;
const database = {
  preparedWrite: async (text: string, values: unknown[]) => {
    for (const v of values) {
      const p = prepareValue(v);
      sink += typeof p === 'string' ? p.length : 0;
    }
    sink += text.length;
    return [];
  },
};
const token = randomUUID();
const ids = Array.from({ length: 40 }, () => randomUUID());
let best = Number.POSITIVE_INFINITY;
for (let run = 0; run < RUNS; run++) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const now = new Date();
    const rs: AttemptRecord[] = ids.map((deliveryId) => ({
      deliveryId,
      token,
      next: 'delivered',
      attempt: 1,
      responseCode: 200,
      error: null,
      nextAttemptAt: null,
      startedAt: now,
      durationMs: 3,
      now,
    }));
    await recordAttempts(database, rs);
  }
  const c = process.cpuUsage(c0);
  best = Math.min(best, ((c.user + c.system) * 1000) / (N * ids.length));
}
console.log(
  `${src}: recordAttempts up to the wire ${Math.round(best)} ns per delivery (best of ${RUNS}; sink ${sink % 10})`,
);
