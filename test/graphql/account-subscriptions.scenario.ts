// The account-wide typed subscriptions (issue 22, item 1): brandUpdated, emailIdentityUpdated and webhookUpdated
// with their id argument omitted follow every object of the account, replayable from `lastEventId`. Shared by the
// one-instance test and the two-instance one (PostgreSQL + Redis): the subscriber listens on `listen`, the changes
// are made through `write`; another account's changes never show.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { collect, latestEventId } from './typed-subscriptions.scenario.js';

const BRANDS = `subscription ($lastEventId: String) {
  brandUpdated(lastEventId: $lastEventId) { eventId eventType brand { id name } }
}`;
const IDENTITIES = `subscription ($lastEventId: String) {
  emailIdentityUpdated(lastEventId: $lastEventId) { eventId eventType emailIdentity { id address displayName status } }
}`;
const WEBHOOKS = `subscription ($lastEventId: String) {
  webhookUpdated(lastEventId: $lastEventId) { eventId eventType changes webhook { id url active description } }
}`;

/** Runs the scenario; `other` is another account writing through `write`'s instance at the same time. */
export async function accountWideScenario(
  listen: { url: string; account: TestAccount },
  write: { account: TestAccount },
  other: TestAccount,
): Promise<void> {
  const w = write.account;
  const cursor = await latestEventId(listen.account);
  const brandIds: string[] = [];
  const brands = await collect(listen.url, listen.account.apiKey, BRANDS, { lastEventId: cursor }, 2, async () => {
    expect((await other.request('POST', '/compliance/brands', brandBody({ name: 'Not Mine LLC' }))).status).toBe(201);
    for (const name of ['Account Wide One LLC', 'Account Wide Two LLC']) {
      const res = await w.request('POST', '/compliance/brands', brandBody({ name }));
      expect(res.status).toBe(201);
      brandIds.push(res.body.id);
    }
  });
  expect(brands.map((r) => r.errors)).toEqual([undefined, undefined]);
  expect(brands.map((r) => [r.data.brandUpdated.eventType, r.data.brandUpdated.brand.id])).toEqual([
    ['10dlc.brand.registered', brandIds[0]],
    ['10dlc.brand.registered', brandIds[1]],
  ]);

  const idCursor = await latestEventId(listen.account);
  let identityId = '';
  const identities = await collect(
    listen.url,
    listen.account.apiKey,
    IDENTITIES,
    { lastEventId: idCursor },
    3,
    async () => {
      const created = await w.request('POST', '/api/email/identities', { localPart: `aw-${randomUUID().slice(0, 8)}` });
      expect(created.status).toBe(201);
      identityId = created.body.id;
      expect((await w.request('PATCH', `/api/email/identities/${identityId}`, { displayName: 'Desk' })).status).toBe(
        200,
      );
      expect((await w.request('DELETE', `/api/email/identities/${identityId}`)).status).toBe(200);
    },
  );
  expect(identities.map((r) => r.errors)).toEqual([undefined, undefined, undefined]);
  expect(identities.map((r) => r.data.emailIdentityUpdated.eventType)).toEqual([
    'email.identity.created',
    'email.identity.updated',
    'email.identity.deprovisioned',
  ]);
  expect(identities.every((r) => r.data.emailIdentityUpdated.emailIdentity.id === identityId)).toBe(true);
  expect(identities[2].data.emailIdentityUpdated.emailIdentity).toMatchObject({
    displayName: 'Desk',
    status: 'deprovisioning',
  });

  const hookCursor = await latestEventId(listen.account);
  let webhookId = '';
  let secret = '';
  const hooks = await collect(listen.url, listen.account.apiKey, WEBHOOKS, { lastEventId: hookCursor }, 4, async () => {
    const created = await w.request('POST', '/api/webhooks', { url: 'https://example.com/hooks', events: ['sms.*'] });
    expect(created.status).toBe(201);
    webhookId = created.body.id;
    secret = created.body.secret;
    expect((await w.request('PATCH', `/api/webhooks/${webhookId}`, { enabled: false })).status).toBe(200);
    expect((await w.request('POST', `/api/webhooks/${webhookId}/rotate-secret`)).status).toBe(200);
    expect((await w.request('DELETE', `/api/webhooks/${webhookId}`)).status).toBe(200);
  });
  expect(hooks.map((r) => r.errors)).toEqual([undefined, undefined, undefined, undefined]);
  expect(hooks.map((r) => [r.data.webhookUpdated.eventType, r.data.webhookUpdated.changes])).toEqual([
    ['webhook.created', []],
    ['webhook.updated', ['enabled']],
    ['webhook.updated', ['secret']],
    ['webhook.deleted', []],
  ]);
  expect(hooks[1].data.webhookUpdated.webhook).toMatchObject({ id: webhookId, active: false });
  expect(hooks[3].data.webhookUpdated.webhook).toBeNull();
  expect(JSON.stringify(hooks)).not.toContain(secret);

  // Replay alone: resubscribing after the first webhook change gives the three later ones, then (live) nothing else.
  const replay = await collect(
    listen.url,
    listen.account.apiKey,
    WEBHOOKS,
    { lastEventId: hooks[0].data.webhookUpdated.eventId },
    3,
  );
  expect(replay.map((r) => r.data.webhookUpdated.eventId)).toEqual(
    hooks.slice(1).map((r) => r.data.webhookUpdated.eventId),
  );
}
