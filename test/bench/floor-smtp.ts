/**
 * The floor of the smtp-inbound scenario of `npm run bench` (issue 24 round 12), loaded by bare-smtp.ts under
 * FLOOR=1: past the bare's parse, only what the target and the search index require:
 * - sender authentication of every message by mailauth through the service's own `authenticateSender` and DNS
 *   adapter (src/domain/email/sender-auth.ts, src/infra/dns/resolver.ts) on DNS_SERVERS, with the service's default
 *   lookup timeout, cache and SMTP_AUTH_TIMEOUT_MS, as the bench starts the service;
 * - one INSERT into a table with the service's generated `search_vector` column (`email_message_search_vector`,
 *   `email_english`, which the service's migrations create in the bench database), its GIN index and lz4 on the
 *   large columns (prisma/migrations 20261128043000_email_search_vector_one_parse, 20261128120000_email_lz4_compression).
 * No threading, events, blob, idempotency or quotas. PostgreSQL only.
 */
import { randomUUID } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';
import type { SMTPServerSession } from 'smtp-server';
import { authenticateSender } from '../../src/domain/email/sender-auth.js';
import { createDnsResolver, parseDnsServers } from '../../src/infra/dns/resolver.js';
import { clientIp } from '../../src/smtp/authenticate.js';

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address ?? ''));

/**
 * Creates the floor's table `bench_floor_mail` in `db` (idempotent) and returns what the floor does per message:
 * authenticate `raw` (RFC 5322 bytes) for `session`'s client IP, EHLO and MAIL FROM, then INSERT the parsed `mail`
 * with the verdicts (the vector is computed by PostgreSQL on INSERT). Resolves once the row is committed.
 */
export async function floorStore(db: {
  query(text: string, values: unknown[]): Promise<unknown>;
}): Promise<(raw: Buffer, mail: ParsedMail, session: SMTPServerSession) => Promise<unknown>> {
  await db.query(
    `CREATE TABLE IF NOT EXISTS bench_floor_mail (id text PRIMARY KEY, rcpt text NOT NULL, from_address text NOT NULL,
     to_addresses text[] NOT NULL, cc_addresses text[] NOT NULL, subject text NOT NULL, body text NOT NULL,
     message_id text, auth jsonb NOT NULL, received_at timestamptz NOT NULL,
     search_vector tsvector GENERATED ALWAYS AS
       (email_message_search_vector(subject, body, from_address, to_addresses, cc_addresses)) STORED)`,
    [],
  );
  await db.query(
    'CREATE INDEX IF NOT EXISTS bench_floor_mail_search_idx ON bench_floor_mail USING GIN (search_vector)',
    [],
  );
  await db.query(
    `DO $$ BEGIN
       ALTER TABLE bench_floor_mail ALTER COLUMN body SET COMPRESSION lz4, ALTER COLUMN search_vector SET COMPRESSION lz4;
     EXCEPTION WHEN feature_not_supported THEN NULL; END $$`,
    [],
  );
  // The service's defaults (src/config.ts DNS_TIMEOUT_MS, DNS_CACHE_ENTRIES, DNS_CACHE_TTL_S, SMTP_AUTH_TIMEOUT_MS).
  const dns = createDnsResolver({
    servers: parseDnsServers(process.env.DNS_SERVERS),
    timeoutMs: 2000,
    cacheEntries: 10_000,
    cacheTtlS: 60,
  });
  return async (raw, mail, session) => {
    const auth = await authenticateSender(
      raw,
      {
        ip: clientIp(session),
        helo: session.hostNameAppearsAs ?? '',
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      },
      { resolver: dns, authServId: 'bench.floor', timeoutMs: 15_000 },
    );
    return db.query(
      `INSERT INTO bench_floor_mail (id, rcpt, from_address, to_addresses, cc_addresses, subject, body, message_id,
       auth, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())`,
      [
        randomUUID(),
        session.envelope.rcptTo[0]?.address ?? '',
        mail.from?.value[0]?.address ?? '',
        addresses(mail.to),
        addresses(mail.cc),
        mail.subject ?? '',
        mail.text ?? '',
        mail.messageId ?? null,
        JSON.stringify(auth),
      ],
    );
  };
}
