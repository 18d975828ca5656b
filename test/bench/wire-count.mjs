// Preloaded by test/bench/wire.ts (NODE_OPTIONS=--import): counts the promises (v8 promiseHooks), the async
// resources by type (async_hooks: timers, ticks, sockets…) and the garbage collections by kind with their time this process creates; on SIGUSR2 writes the totals so far
// as JSON to `${WIRE_COUNT_DIR}/<pid>.json`. Measurement only.
import { createHook } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { promiseHooks } from 'node:v8';

const counts = { promises: 0 };
promiseHooks.onInit(() => {
  counts.promises++;
});
createHook({
  init(_id, type) {
    if (type !== 'PROMISE') counts[type] = (counts[type] ?? 0) + 1;
  },
}).enable();
// Garbage collections by kind (minor = scavenge, major = mark-compact, incremental marking steps) and their time, ms.
const GC_KINDS = { 1: 'gc-minor', 2: 'gc-major', 4: 'gc-incremental', 8: 'gc-weakcb' };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = GC_KINDS[e.detail?.kind] ?? 'gc-other';
    counts[kind] = (counts[kind] ?? 0) + 1;
    counts[`${kind}-ms`] = (counts[`${kind}-ms`] ?? 0) + e.duration;
  }
}).observe({ entryTypes: ['gc'] });
process.on('SIGUSR2', () => {
  writeFileSync(`${process.env.WIRE_COUNT_DIR}/${process.pid}.json`, JSON.stringify(counts));
});
