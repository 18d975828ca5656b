// Issue 24: DATA's start is read by its `data` events and a message past one blob chunk is handed over to a
// `for await` (inbound-stream.ts). An error of the DATA stream in that handover, while the held chunks are being
// stored and nothing else listens, must fail the message, never be an uncaught exception; nothing is kept.
import { PassThrough } from 'node:stream';
import nodemailer from 'nodemailer';
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

it('stores the bytes of a held message exactly as they arrived (the raw download is them after its Authentication-Results)', async ({
  t,
  a,
}) => {
  const box = await a.request('POST', '/api/email/identities', { localPart: `exact${Date.now().toString(36)}` });
  expect(box.status).toBe(201);
  const messageId = `<exact-${Date.now()}@bytes.example>`;
  // Every byte value a message body can carry over 8BITMIME (no NUL, CR or LF alone), so an offset or a copy
  // gone wrong shows.
  const body = Buffer.from(Array.from({ length: 255 }, (_, i) => i + 1).filter((b) => b !== 10 && b !== 13));
  const raw = Buffer.concat([
    Buffer.from(
      `From: exact@bytes.example\r\nTo: ${box.body.address}\r\nSubject: exact\r\nMessage-ID: ${messageId}\r\n` +
        'Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: 8bit\r\n\r\n',
    ),
    body,
    Buffer.from('\r\nend\r\n'),
  ]);
  const info = await nodemailer
    .createTransport({ host: '127.0.0.1', port: t.app.smtpPort()!, ignoreTLS: true })
    .sendMail({ envelope: { from: 'exact@bytes.example', to: [box.body.address] }, raw });
  expect(String(info.response)).toMatch(/^250/);
  const res = await fetch(
    `${t.url}/api/email/identities/${box.body.id}/messages/${encodeURIComponent(messageId)}/raw`,
    { headers: { authorization: `Bearer ${a.apiKey}` } },
  );
  expect(res.status).toBe(200);
  const stored = Buffer.from(await res.arrayBuffer());
  expect(stored.subarray(0, 24).toString('latin1')).toBe('Authentication-Results: ');
  expect(stored.subarray(stored.length - raw.length).equals(raw)).toBe(true);
});
