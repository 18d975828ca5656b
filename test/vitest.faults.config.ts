import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults` (issue 13): crash and fault tests that kill service processes and a Redis server with
 * SIGKILL under load. They need PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 * and `redis-server` on the PATH; each starts its own Redis on a free port. Bounded by event counts, not time.
 */
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 900_000,
    hookTimeout: 300_000,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
  },
});
