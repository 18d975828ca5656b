// Account-wide typed subscriptions across two instances sharing PostgreSQL and Redis (issue 22, item 1): changes
// made through instance two reach brandUpdated / emailIdentityUpdated / webhookUpdated subscribers (no id) on
// instance one through graphql-redis-subscriptions, replayable from their event ids.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { accountWideScenario } from '../graphql/account-subscriptions.scenario.js';
import { accountClient, startApp, type TestApp } from '../helpers/app.js';

describe('account-wide typed subscriptions across two instances (PostgreSQL + Redis)', () => {
  let one: TestApp;
  let two: TestApp;
  const env = { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: `sb-test-${randomUUID()}:` };
  beforeAll(async () => {
    one = await startApp({ env });
    two = await startApp({ env });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('changes made on two reach account-wide subscribers on one', async () => {
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    const other = await two.newAccount();
    await accountWideScenario({ url: one.url, account: a }, { account: onTwo }, other);
  });
});
