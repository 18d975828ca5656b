import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature, verifyStandardWebhook } from '../../src/webhooks-verify.js';

/** One request the receiver got, with the outcome of verifying its signatures. */
export interface ReceivedDelivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body bytes as received. */
  raw: Buffer;
  body: any;
  /** X-Switchboard-Signature matched one of the receiver's secrets for this path (constant-time compare). */
  signatureValid: boolean;
  /** X-Switchboard-Signature-Previous matched one of the secrets. */
  previousSignatureValid: boolean;
  /** The Standard Webhooks signature verified (and the timestamp was fresh against `now()`). */
  standardValid: boolean;
  /** How many `v1,` entries webhook-signature carried. */
  standardSignatureCount: number;
}

/** What the receiver answers: a status and headers. */
export type Responder = (req: ReceivedDelivery) => { status: number; headers?: Record<string, string> };

/**
 * A real HTTP receiver on 127.0.0.1 (node:http): records every delivery and verifies every signature with the
 * package's receiver helper. Secrets are registered per path (one webhook per path).
 */
export interface Receiver {
  url: string;
  /** Deliveries received, in arrival order. */
  received: ReceivedDelivery[];
  /** Deliveries received on `path`. */
  on(path: string): ReceivedDelivery[];
  /** Sets the secrets accepted on `path` (several during a rotation). */
  setSecrets(path: string, secrets: string[]): void;
  /** Sets how `path` answers (default 200). */
  respond(path: string, responder: Responder): void;
  /** Resolves once `count` deliveries arrived on `path`. */
  waitFor(path: string, count: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** Starts a {@link Receiver}. `now` is the clock the Standard Webhooks timestamp is checked against. */
export async function startReceiver(now: () => Date = () => new Date()): Promise<Receiver> {
  const received: ReceivedDelivery[] = [];
  const secrets = new Map<string, string[]>();
  const responders = new Map<string, Responder>();
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const accepted = secrets.get(path) ?? [];
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const header = (name: string) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const standard = {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      };
      const delivery: ReceivedDelivery = {
        path,
        headers: req.headers,
        raw,
        body,
        signatureValid: accepted.some((s) => verifySignature(raw, s, header('x-switchboard-signature'))),
        previousSignatureValid: accepted.some((s) =>
          verifySignature(raw, s, header('x-switchboard-signature-previous')),
        ),
        standardValid: accepted.some((s) => verifyStandardWebhook(raw, s, standard, { now: now() })),
        standardSignatureCount: (standard['webhook-signature'] ?? '').split(' ').filter((e) => e.startsWith('v1,'))
          .length,
      };
      received.push(delivery);
      const answer = responders.get(path)?.(delivery) ?? { status: 200 };
      res.writeHead(answer.status, answer.headers ?? {});
      res.end('ok');
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const on = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    on,
    setSecrets: (path, list) => secrets.set(path, list),
    respond: (path, responder) => responders.set(path, responder),
    waitFor: (path, count) =>
      new Promise((resolve) => {
        const check = () => {
          if (on(path).length >= count) resolve(on(path));
          else waiters.push(check);
        };
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
