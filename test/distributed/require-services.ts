/** Distributed suites never skip silently: without PostgreSQL and Redis they fail at once, saying what is missing. */
export default function requireServices(): void {
  const missing = ['TEST_DATABASE_URL', 'TEST_REDIS_URL'].filter((v) => !process.env[v]);
  if (missing.length > 0) {
    throw new Error(`test:distributed needs ${missing.join(' and ')} (see README "Testing"); .ci/run sets them.`);
  }
}
