import { describe, expect, it } from 'vitest';
import { CLAIM_LEASE_MS } from '../../src/domain/email/outbound.service.js';
import { RELAY_TIMEOUTS_MS } from '../../src/infra/mail/nodemailer-transport.js';

describe('relay client timeouts', () => {
  // One relay attempt must end before its claim lease does, or a second dispatcher claims the message again and
  // the relay gets it twice. Waiting out real socket timeouts would take minutes, so this checks the bound itself.
  it('a stalled relay gives up well inside the claim lease (nodemailer defaults would wait 10 min)', () => {
    const { connection, greeting, socket, dns } = RELAY_TIMEOUTS_MS;
    expect(Math.max(connection, dns) + greeting + socket).toBeLessThanOrEqual(CLAIM_LEASE_MS / 2);
    for (const ms of [connection, greeting, socket, dns]) expect(ms).toBeGreaterThanOrEqual(10_000);
  });
});
