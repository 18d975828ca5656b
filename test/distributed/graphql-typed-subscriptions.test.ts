import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import { brandUpdatedScenario, collect } from '../graphql/typed-subscriptions.scenario.js';
import { accountClient } from '../helpers/app.js';
import { useTwoInstances } from './two-instances.js';

describe('typed subscriptions across two instances (PostgreSQL + Redis)', () => {
  const apps = useTwoInstances();

  for (const single of [false, true]) {
    it(`brandUpdated on instance one sees changes made on instance two (${single ? 'single' : 'distinct'} connection)`, async () => {
      const { one, two } = apps;
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

  it('change notices travel over Redis through graphql-redis-subscriptions: a live-only subscriber on one sees a change made on two', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    const created = await onTwo.request('POST', '/compliance/brands', brandBody({ name: 'Redis Notice LLC' }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // A plain Redis client watching the notice channels shows the notices are on Redis (RedisPubSub), not in-process.
    const spy = new Redis(process.env.TEST_REDIS_URL!);
    const onRedis: string[] = [];
    await spy.psubscribe(`${apps.env.REDIS_KEY_PREFIX}gql:*`);
    spy.on('pmessage', (_pattern, channel) => onRedis.push(channel));
    try {
      // No lastEventId: only the live path (the PubSub) can bring the change. Renames repeat until the subscriber
      // has one, so the test waits for the notice itself rather than for the subscription to be live.
      let seen = false;
      let renames: Promise<void> | undefined;
      const rename = async () => {
        for (let n = 0; !seen; n++) {
          const res = await onTwo.request('PUT', `/compliance/brands/${id}`, {
            ...brandBody({ name: `Redis Notice ${n} LLC` }),
            vertical: 'TECHNOLOGY',
          });
          expect(res.status).toBe(200);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const live = await collect(
        one.url,
        a.apiKey,
        'subscription ($id: ID!) { brandUpdated(id: $id) { eventType brand { id name } } }',
        { id },
        1,
        async () => {
          renames = rename();
        },
      );
      seen = true;
      await renames;
      expect(live[0].errors).toBeUndefined();
      expect(live[0].data.brandUpdated).toMatchObject({ eventType: '10dlc.brand.updated', brand: { id } });
      expect(live[0].data.brandUpdated.brand.name).toMatch(/^Redis Notice \d+ LLC$/);
      expect(onRedis).toContain(`${apps.env.REDIS_KEY_PREFIX}gql:${a.accountId}:brand:${id}`);
    } finally {
      spy.disconnect();
    }
  });
});
