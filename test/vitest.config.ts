import { defineConfig } from 'vitest/config';

/**
 * `npm test`: every suite that runs on a fresh machine (embedded PGlite, in-process bus). With TEST_DATABASE_URL
 * set, the same suites run against PostgreSQL (.ci/run does both). Suites needing PostgreSQL and Redis together
 * live in test/distributed and run with `npm run test:distributed`.
 */
export default defineConfig({
  // One copy of graphql: load its CommonJS entry as Node (and so Pothos and Yoga) does, not the `module` entry.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['test/distributed/**', 'test/faults/**', 'node_modules/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
  },
});
