/**
 * The loopback SMTP sink of `npm run bench`'s mail-send scenario: smtp-server accepting every message (no AUTH, no
 * STARTTLS), reading each DATA to its end, and counting the messages received per envelope sender domain, with how
 * many carried a `DKIM-Signature` header. It is the relay of the service (SMTP_RELAY_URL) and the destination of the
 * bare nodemailer pool alike, so both sides are counted where the mail arrives. Prints `listening <port>`; over IPC,
 * `{ stats: true }` answers `{ received: { [domain]: { mails, dkim } } }` and `{ reset: true }` forgets the counts.
 * Loopback only.
 */
import { SMTPServer } from 'smtp-server';

const received = new Map<string, { mails: number; dkim: number }>();
const DKIM = /^dkim-signature:/im;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  maxClients: 1000,
  // No reverse DNS lookup of each client (smtp-server's default): the service opens a connection per relayed
  // message and the bare pool keeps its few, so a slow resolver would weigh on one side only.
  disableReverseLookup: true,
  onData(stream, session, callback) {
    let head = '';
    let inHead = true;
    stream.on('data', (c: Buffer) => {
      if (!inHead) return;
      head += c.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0) {
        head = head.slice(0, end);
        inHead = false;
      }
    });
    stream.on('end', () => {
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const domain = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
      const entry = received.get(domain) ?? { mails: 0, dkim: 0 };
      received.set(domain, entry);
      entry.mails++;
      if (DKIM.test(head)) entry.dkim++;
      callback(null);
    });
  },
});
process.on('message', (m: { stats?: boolean; reset?: boolean }) => {
  if (m.reset) received.clear();
  if (m.stats) process.send!({ received: Object.fromEntries(received) });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
