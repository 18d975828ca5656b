// Typed GraphQL subscriptions across two instances sharing PostgreSQL and Redis: a brand changed through one
// instance reaches a brandUpdated subscriber on the other, re-read there, resumable from its event id.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { brandUpdatedScenario } from '../graphql/typed-subscriptions.scenario.js';
import { accountClient, startApp, type TestApp } from '../helpers/app.js';

describe('typed subscriptions across two instances (PostgreSQL + Redis)', () => {
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

  for (const single of [false, true]) {
    it(`brandUpdated on instance one sees changes made on instance two (${single ? 'single' : 'distinct'} connection)`, async () => {
      const a = await one.newAccount();
      const onTwo = accountClient(two.url, a.accountId, a.apiKey);
      const stranger = await two.newAccount();
      await brandUpdatedScenario(
        { url: one.url, account: a },
        { account: onTwo },
        { url: two.url, account: stranger },
        single,
      );
    });
  }
});
