/**
 * The bare SMTP baseline of the smtp-inbound scenario of `npm run bench`: smtp-server + mailparser + one INSERT per
 * message on the same database as the service (PostgreSQL, or a copy of its PGlite data), no sender
 * authentication, no threading, no events. What the service's inbound path costs above this is its overhead.
 * With FLOOR=1 (PostgreSQL only) it is the row's floor (issue 24 round 12): the same pipeline plus only what the
 * target and the search index require, see floor-smtp.ts (the row's note).
 * Environment: PORT; DATABASE_URL or BARE_PGLITE_DIR; FLOOR, DNS_SERVERS. Loopback only.
 */
import { randomUUID } from 'node:crypto';
import { type ParsedMail, simpleParser } from 'mailparser';
import pg from 'pg';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

interface Runner {
  query(text: string, values: unknown[]): Promise<unknown>;
}

async function openRunner(): Promise<Runner> {
  if (process.env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    return { query: (text, values) => pool.query(text, values) };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const lite = await PGlite.create({ dataDir: process.env.BARE_PGLITE_DIR! });
  return { query: (text, values) => lite.query(text, values) };
}

/** What one message does past the parse: the bare's INSERT, or the floor's authentication and INSERT. */
type Store = (raw: Buffer, mail: ParsedMail, session: SMTPServerSession) => Promise<unknown>;

const db = await openRunner();
const floor: Store | undefined = process.env.FLOOR ? await (await import('./floor-smtp.js')).floorStore(db) : undefined;
await db.query(
  `CREATE TABLE IF NOT EXISTS bench_bare_mail (id text PRIMARY KEY, rcpt text NOT NULL, from_address text NOT NULL,
   subject text NOT NULL, body text NOT NULL, message_id text, received_at timestamptz NOT NULL)`,
  [],
);
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  maxClients: 200,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks);
      simpleParser(raw)
        .then((mail) =>
          floor
            ? floor(raw, mail, session)
            : db.query(
                'INSERT INTO bench_bare_mail (id, rcpt, from_address, subject, body, message_id, received_at) VALUES ($1, $2, $3, $4, $5, $6, now())',
                [
                  randomUUID(),
                  session.envelope.rcptTo[0]?.address ?? '',
                  mail.from?.value[0]?.address ?? '',
                  mail.subject ?? '',
                  mail.text ?? '',
                  mail.messageId ?? null,
                ],
              ),
        )
        .then(
          () => callback(null),
          () => callback(Object.assign(new Error('4.3.0 try again'), { responseCode: 451 })),
        );
    });
  },
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write(`listening ${process.env.PORT}\n`));
