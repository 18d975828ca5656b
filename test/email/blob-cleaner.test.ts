import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';

let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** Raw messages and draft attachments nothing refers to any more are deleted; referenced ones stay. */
describe('orphaned blob cleaner', () => {
  const clock = new ManualClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ clock });
  });
  afterAll(() => t?.close());

  it('deletes the raw messages of a purged identity, keeps shared, live and draft blobs', async () => {
    const a = await t.newAccount();
    const make = async () =>
      (await a.request('POST', '/api/email/identities', { localPart: unique('blob') })).body as {
        id: string;
        address: string;
      };
    const keep = await make();
    const gone = await make();
    const peer = await make();
    // gone → peer: one raw message shared by the sender's copy and the recipient's (stored once).
    const shared = await a.request('POST', `/api/email/identities/${gone.id}/send`, {
      to: peer.address,
      subject: 'Shared',
      body: 'x',
    });
    expect(shared.status).toBe(202);
    // gone alone: a message only the purged identity refers to.
    await a.request('POST', `/api/email/identities/${gone.id}/send`, {
      to: 'x@remote.example',
      subject: 'Own',
      body: 'x',
    });
    const draft = await a.request('POST', `/api/email/identities/${keep.id}/drafts`, {
      to: peer.address,
      subject: 'With attachment',
      body: 'x',
      attachments: [{ filename: 'a.bin', content: Buffer.alloc(1000, 1).toString('base64') }],
    });
    expect(draft.status).toBe(201);
    await t.drain();
    const blobs = () => t.app.ctx.db.emailBlob.count();
    const before = await blobs();

    expect((await a.request('DELETE', `/api/email/identities/${gone.id}`)).status).toBe(200);
    clock.advance(31 * 86_400_000);
    await t.drain(); // the purger deletes the identity and its messages
    clock.advance(120_000);
    await t.drain(); // the cleaner deletes what nothing refers to
    expect(await blobs()).toBe(before - 1);

    // The shared raw message is still the peer's; the draft's attachment still goes out with it.
    const threads = await a.request('GET', `/api/email/identities/${peer.id}/threads`);
    const mid = encodeURIComponent(shared.body.messageId);
    const raw = await fetch(`${t.url}/api/email/identities/${peer.id}/messages/${mid}/raw`, {
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(raw.status).toBe(200);
    expect(await raw.text()).toContain('Subject: Shared');
    expect(threads.body.threads).toHaveLength(1);
    const sent = await a.request('POST', `/api/email/identities/${keep.id}/drafts/${draft.body.draftId}/send`);
    expect(sent.status).toBe(202);
    await t.drain();
    const detail = await a.request('GET', `/api/email/identities/${keep.id}/threads/${sent.body.threadId}`);
    expect(detail.body.messages[0].attachments).toEqual([expect.objectContaining({ filename: 'a.bin', size: 1000 })]);
  });
});
