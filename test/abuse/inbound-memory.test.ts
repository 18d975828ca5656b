// Issue 26, item 3: inbound mail is streamed to storage with bounded memory, and memory returns to its baseline
// after a burst. The service runs as its own process (its resident memory is what is measured, from /proc) on the
// embedded default (PGlite, the harder case: the database lives in the same process) with glibc malloc set as
// `npm start` sets it; a burst of large messages arrives at once over SMTP from three loopback addresses. Memory
// bounds only, never speed. The full 50 × 10 MB burst on both databases: scripts/smtp-burst.mjs, figures in
// docs/operations.md "Inbound memory under a burst".
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { largeMime } from '../../scripts/large-mime.mjs';
import { tempDir } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { runEntry } from '../helpers/process.js';

/** Messages sent at once, and the size of each (bytes). */
const MESSAGES = 12;
const BYTES = 10_000_000;
/** Largest rise of the service's RSS over its idle baseline during the burst (120 MB of mail arrives). */
const PEAK_GROWTH_MB = 150;
/** How close to the baseline the RSS must come back, and how soon after the last reply. */
const SETTLED_MARGIN_MB = 60;
const SETTLE_WITHIN_MS = 60_000;

const ADMIN_TOKEN = randomBytes(24).toString('hex');

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** A multipart message of about `bytes`: a short text part and a base64 attachment (scripts/large-mime.mjs). */
function message(to: string, n: number, bytes: number): Buffer {
  return largeMime({
    bytes,
    boundary: 'inbound-memory-boundary',
    headers: [
      'From: sender@burst.example',
      `To: ${to}`,
      `Subject: burst ${n}`,
      `Message-ID: <burst-${n}-${Date.now()}@burst.example>`,
    ],
  });
}

// Once per CI run: the embedded pass (the PostgreSQL pass would start the same PGlite service again).
describe.skipIf(process.platform !== 'linux' || Boolean(process.env.TEST_DATABASE_URL))(
  'inbound memory under a burst of large mail',
  { timeout: 900_000 },
  () => {
    it(`${MESSAGES} × ${BYTES / 1e6} MB at once: all accepted, peak bounded, back to the baseline within a minute`, async () => {
      const { dir, cleanup } = await tempDir();
      const service = runEntry('main.ts', [], {
        DATA_DIR: dir,
        PORT: '0',
        ADMIN_TOKEN,
        BOOTSTRAP_ACCOUNT: 'false',
        // As `npm start` and the image set them (package.json, Dockerfile).
        MALLOC_ARENA_MAX: '2',
        MALLOC_MMAP_THRESHOLD_: '131072',
        // No sender lookups leave the machine: a closed loopback port answers at once (temperror).
        DNS_SERVERS: '127.0.0.1:9',
        SMTP_MESSAGES_PER_ADDRESS: '10000',
        SMTP_MESSAGES_PER_SENDER_DOMAIN: '10000',
      });
      try {
        const [, base] = await service.waitFor(/"address":"(http:\/\/[^"]+)"/, 240_000);
        const [, smtpPort] = await service.waitFor(/inbound SMTP listening on [^"]*:(\d+)/, 10_000);
        const pid = service.child.pid as number;
        const call = async (path: string, body: unknown, token: string) => {
          const res = await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(res.status, path).toBeLessThan(300);
          return (await res.json()) as Record<string, string>;
        };
        const account = await call('/admin/accounts', { name: 'burst' }, ADMIN_TOKEN);
        const identity = await call('/api/email/identities', { localPart: 'burst' }, account.apiKey as string);
        const to = identity.address as string;
        const send = (raw: Buffer, localAddress: string) =>
          nodemailer
            .createTransport({ host: '127.0.0.1', port: Number(smtpPort), ignoreTLS: true, localAddress })
            .sendMail({ envelope: { from: 'sender@burst.example', to: [to] }, raw })
            .then((info) => String(info.response));

        // Warm-up: the first messages load the MIME parser and the sender authentication, and 40 MB of them is a
        // burst of its own (the listener collects 5 s after one): the baseline is a service that has received mail.
        const warmUp = await Promise.all(
          [0, 1, 2, 3].map((n) => send(message(to, 100 + n, BYTES), `127.0.0.${1 + n}`)),
        );
        expect(warmUp.filter((r) => r.startsWith('250'))).toHaveLength(4);
        await sleep(10_000);
        const baseline = rssMb(pid);

        let peak = baseline;
        const sampler = setInterval(() => {
          peak = Math.max(peak, rssMb(pid));
        }, 200);
        const body = message(to, 1, BYTES);
        const replies = await Promise.all(
          Array.from({ length: MESSAGES }, (_, n) => send(body, `127.0.0.${1 + (n % 3)}`).catch((e) => String(e))),
        );
        clearInterval(sampler);
        const answered = Date.now();
        expect(replies.filter((r) => r.startsWith('250'))).toHaveLength(MESSAGES);

        let settled = rssMb(pid);
        while (settled > baseline + SETTLED_MARGIN_MB && Date.now() - answered < SETTLE_WITHIN_MS) {
          await sleep(1_000);
          settled = rssMb(pid);
        }
        const settledAfterS = Math.round((Date.now() - answered) / 1000);
        console.log(
          `inbound burst ${MESSAGES} × ${BYTES / 1e6} MB: RSS baseline ${baseline} MB, peak ${peak} MB (+${peak - baseline}), ${settled} MB (+${settled - baseline}) ${settledAfterS} s after the last reply`,
        );
        expect(peak - baseline).toBeLessThanOrEqual(PEAK_GROWTH_MB);
        expect(settled - baseline).toBeLessThanOrEqual(SETTLED_MARGIN_MB);
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
        await cleanup();
      }
    });
  },
);

const appIt = appTest();

describe('inbound header caps and one raw copy', () => {
  appIt(
    'a 100 KB subject is kept as the send API caps it (998 characters); the raw message is stored once for every recipient',
    async ({ t }) => {
      const a = await t.newAccount();
      const boxes: { id: string; address: string }[] = [];
      for (const localPart of [`cap${Date.now().toString(36)}`, `cap2${Date.now().toString(36)}`]) {
        const res = await a.request('POST', '/api/email/identities', { localPart });
        expect(res.status).toBe(201);
        boxes.push(res.body);
      }
      const blobsBefore = await t.app.ctx.db.emailBlob.count();
      const messageId = `<cap-${Date.now()}@burst.example>`;
      const raw = Buffer.from(
        [
          'From: sender@burst.example',
          `To: ${boxes.map((b) => b.address).join(', ')}`,
          `Subject: ${'s'.repeat(100_000)}`,
          `Message-ID: ${messageId}`,
          '',
          'Hello.',
          '',
        ].join('\r\n'),
      );
      const info = await nodemailer
        .createTransport({ host: '127.0.0.1', port: t.app.smtpPort()!, ignoreTLS: true })
        .sendMail({ envelope: { from: 'sender@burst.example', to: boxes.map((b) => b.address) }, raw });
      expect(String(info.response)).toMatch(/^250/);
      const rows = await t.app.ctx.db.emailMessage.findMany({ where: { messageId } });
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row.subject).toBe('s'.repeat(998));
      // One blob shared by both copies, as large as the message (not a copy per recipient).
      expect(new Set(rows.map((r) => r.rawBlobId)).size).toBe(1);
      expect(await t.app.ctx.db.emailBlob.count()).toBe(blobsBefore + 1);
      const blob = await t.app.ctx.db.emailBlob.findUnique({ where: { id: rows[0]!.rawBlobId! } });
      expect(blob!.size).toBeGreaterThanOrEqual(raw.length);
      expect(blob!.size).toBeLessThan(raw.length + 1000);
      // Threads carry the capped subject too.
      const threads = await a.request('GET', `/api/email/identities/${boxes[0]!.id}/threads?limit=10`);
      expect(threads.body.threads[0].subject).toHaveLength(998);
    },
  );
});
