import { describe, it } from 'vitest';
import { accountWideScenario } from '../graphql/account-subscriptions.scenario.js';
import { accountClient } from '../helpers/app.js';
import { useTwoInstances } from './two-instances.js';

describe('account-wide typed subscriptions across two instances (PostgreSQL + Redis)', () => {
  const apps = useTwoInstances();

  it('changes made on two reach account-wide subscribers on one', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    const other = await two.newAccount();
    await accountWideScenario({ url: one.url, account: a }, { account: onTwo }, other);
  });
});
