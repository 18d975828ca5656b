import nodemailer from 'nodemailer';
import { describe, expect } from 'vitest';
import { AUTH_FAILURE_LIMIT } from '../../src/smtp/submission.js';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

/** AUTH floods on the submission listener (issue 20 sections 3 and 5), in an app of its own: it blocks 127.0.0.1. */
describe('SMTP submission: an AUTH flood is refused with 421 and a pause', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  /** One connection, one AUTH PLAIN attempt. @returns the SMTP reply code of the failure (or 250 on success). */
  async function attempt(user: string, pass: string): Promise<number> {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.app.smtpSubmissionPort()!,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user, pass },
    });
    try {
      await transport.verify();
      return 250;
    } catch (err) {
      return (err as { responseCode?: number }).responseCode ?? -1;
    } finally {
      transport.close();
    }
  }

  it('more than 10 failures from one address within a minute: 421, then even the right password waits', async ({
    a,
  }) => {
    const box = await a.request('POST', '/api/email/identities', { localPart: `flood${Date.now().toString(36)}` });
    const creds = await a.request('POST', `/api/email/identities/${box.body.id}/smtp-credentials`);
    expect(await attempt(box.body.address, creds.body.smtpPass)).toBe(250);
    const codes: number[] = [];
    for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) codes.push(await attempt(box.body.address, 'wrong-password'));
    expect(codes.slice(0, AUTH_FAILURE_LIMIT)).toEqual(Array(AUTH_FAILURE_LIMIT).fill(535));
    expect(codes[AUTH_FAILURE_LIMIT]).toBe(421);
    // The pause: the address is refused at connect, whatever it sends.
    expect(await attempt(box.body.address, creds.body.smtpPass)).toBe(421);
  });
});
