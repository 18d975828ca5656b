// Receivers verify our deliveries with the `standardwebhooks` package (the Standard Webhooks reference library,
// `npm i standardwebhooks`), as docs/webhooks.md tells them: the whsec_ secret as given at registration, the raw
// body and the webhook-id / webhook-timestamp / webhook-signature headers. A tampered body is refused.
import { Webhook } from 'standardwebhooks';
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

let receiver: Receiver;
const it = appTest(async ({ onCleanup }) => {
  receiver = await startReceiver();
  onCleanup(() => receiver.close());
  return {};
});

describe('deliveries verify with the standardwebhooks package', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('verifies a real delivery, and refuses it with another body or another secret', async () => {
    const hook = await a.request('POST', '/api/webhooks', { url: `${receiver.url}/std`, events: ['sms.*'] });
    expect(hook.status).toBe(201);
    receiver.setSecrets('/std', [hook.body.secret]);
    const posted = await a.request('POST', '/api/events', {
      eventType: 'sms.sent',
      payload: { id: 'std-1', from: '+14155550100', to: '+14155550101', status: 'sent' },
    });
    expect(posted.status).toBe(202);
    const [delivery] = await receiver.waitFor('/std', 1);
    const headers = {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': String(delivery!.headers['webhook-signature']),
    };
    const verified = new Webhook(hook.body.secret).verify(delivery!.raw.toString('utf8'), headers) as any;
    expect(verified).toMatchObject({ eventType: 'sms.sent', customerId: a.accountId, payload: { id: 'std-1' } });
    expect(() =>
      new Webhook(hook.body.secret).verify(delivery!.raw.toString('utf8').replace('std-1', 'std-2'), headers),
    ).toThrow();
    const other = (await a.request('POST', '/api/webhooks', { url: `${receiver.url}/other`, events: ['voice.*'] })).body
      .secret as string;
    expect(() => new Webhook(other).verify(delivery!.raw.toString('utf8'), headers)).toThrow();
  });
});
