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
    // Files in one worker share loaded modules (the Pothos schema, the Prisma client, Fastify): importing them
    // cost ~3 s per file. Each file still starts its own app and (on PostgreSQL) database: per-file.ts.
    isolate: false,
    setupFiles: ['test/helpers/per-file.ts'],
    // Tests wait for events, not for time: these bounds only stop a hung test, so they hold on a busy machine
    // (issue 13: 30 s timeouts failed under load average 10 on 2 cores).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
  },
});
