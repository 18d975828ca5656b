import { defineConfig } from 'vitest/config';

/** `npm run test:distributed`: suites that need PostgreSQL and Redis (TEST_DATABASE_URL and TEST_REDIS_URL). */
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/distributed/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 300_000,
    passWithNoTests: true,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
    hookTimeout: 300_000,
    globalSetup: ['test/distributed/require-services.ts'],
  },
});
