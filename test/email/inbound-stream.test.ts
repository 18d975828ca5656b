// Issue 24: DATA's start is read by its `data` events and a message past one blob chunk is handed over to a
// `for await` (inbound-stream.ts). An error of the DATA stream in that handover, while the held chunks are being
// stored and nothing else listens, must fail the message, never be an uncaught exception; nothing is kept.
import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import { receiveInboundStream } from '../../src/domain/email/inbound-stream.js';
import { BLOB_CHUNK_BYTES } from '../../src/domain/email/mail-blob.store.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

it('an error of the DATA stream while its held start is stored fails the message and keeps nothing', async ({
  t,
  a,
}) => {
  const box = await a.request('POST', '/api/email/identities', { localPart: `handover${Date.now().toString(36)}` });
  expect(box.status).toBe(201);
  const blobsBefore = await t.app.ctx.db.emailBlob.count();
  const data = new PassThrough();
  const receiving = receiveInboundStream(
    t.app.ctx,
    data,
    { mailFrom: 'cut@example.org', rcptTo: [box.body.address] },
    10_000_000,
  );
  const head = `From: cut@example.org\r\nTo: ${box.body.address}\r\nSubject: cut\r\n\r\n`;
  // Past one chunk: the reader pauses and the held chunks go to storage (a chunk row: I/O), then the stream fails.
  data.write(Buffer.concat([Buffer.from(head), Buffer.alloc(BLOB_CHUNK_BYTES + 1024, 'x')]));
  await new Promise((resolve) => setImmediate(resolve));
  data.destroy(
    Object.assign(new Error('Connection closed before the message was received in full'), { code: 'ECONNECTION' }),
  );
  await expect(receiving).rejects.toThrow(/Connection closed before the message/);
  expect(await t.app.ctx.db.emailBlob.count()).toBe(blobsBefore);
  const threads = await a.request('GET', `/api/email/identities/${box.body.id}/threads?limit=10`);
  expect(threads.body.threads).toHaveLength(0);
});
