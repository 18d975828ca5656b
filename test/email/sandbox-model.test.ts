import { describe, expect } from 'vitest';
import { SANDBOX_MARK } from '../../src/infra/model/sandbox.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

/** Polls `read` until it returns a value (the workers run on their own clock here), at most `ms`. */
async function eventually<T>(read: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const it = appTest({ env: { LLM_BASE_URL: '' } });

describe('the README email walk-through with no model installed (sandbox model, LLM_BASE_URL unset)', () => {
  async function walkThrough(a: TestAccount, body: string) {
    const agent = await a.request('POST', '/api/agents', {
      name: 'Support',
      systemPrompt: 'You are Acme support. Be brief.',
      textModel: 'llama3.2',
      contextSources: ['sms', 'knowledge'],
    });
    expect(agent.status).toBe(201);
    await a.request('POST', `/api/agents/${agent.body.id}/knowledge`, {
      title: 'Shipping',
      content: 'Returns are accepted for 30 days.\n\nOrders ship within 2 business days. Tracking links come by SMS.',
    });
    await a.request('POST', `/api/agents/${agent.body.id}/knowledge`, { title: 'Parking', content: 'Park in lot C.' });
    const suffix = Math.random().toString(36).slice(2, 8);
    const support = await a.request('POST', '/api/email/identities', {
      localPart: `support-${suffix}`,
      displayName: 'Acme Support',
      agentId: agent.body.id,
    });
    const sales = await a.request('POST', '/api/email/identities', { localPart: `sales-${suffix}` });
    expect([support.status, sales.status]).toEqual([201, 201]);
    // Sales is the contact owning +14155550123: its SMS history is what the agent may quote to it.
    const contact = await a.request('POST', '/api/contacts', {
      name: 'Sales desk',
      emails: [sales.body.address],
      phones: ['+14155550123'],
    });
    expect(contact.status).toBe(201);
    // Sent by the identity through the API and delivered locally: an authenticated sender (no DNS involved).
    const sent = await a.request('POST', `/api/email/identities/${sales.body.id}/send`, {
      to: support.body.address,
      subject: 'Order 881',
      body,
    });
    expect(sent.status).toBe(202);
    const answer = await eventually(async () => {
      // The answer joins sales' own "Order 881" thread (In-Reply-To its mail).
      const detail = await a.request('GET', `/api/email/identities/${sales.body.id}/threads/${sent.body.threadId}`);
      return detail.body.messages.find((m: { subject: string }) => m.subject === 'Re: Order 881');
    });
    const supportThreads = await a.request('GET', `/api/email/identities/${support.body.id}/threads`);
    const detail = await a.request(
      'GET',
      `/api/email/identities/${support.body.id}/threads/${supportThreads.body.threads[0].threadId}`,
    );
    expect(detail.body.messages[0].agent).toMatchObject({ status: 'answered', attempts: 1 });
    // The greeting names the sender, whose address differs per run; the rest must be identical.
    await a.request('DELETE', `/api/contacts/${contact.body.id}`);
    return (answer.body as string).replaceAll(sales.body.address, '<sales>');
  }

  it('an email to an agent identity gets a sandbox answer quoting the best knowledge passage and the last SMS', async ({
    a,
  }) => {
    await a.request('POST', '/api/events', {
      eventType: 'sms.received',
      payload: { id: 'sms-1', from: '+14155550123', to: '+14155550100', body: 'Where is my order 881?' },
    });
    await a.request('POST', '/api/events', {
      eventType: 'sms.received',
      payload: { id: 'sms-2', from: '+14155559999', to: '+14155550100', body: 'someone else entirely' },
    });
    const body = await walkThrough(a, 'When does order 881 ship? Text me at (415) 555-0123.');
    expect(body.startsWith(SANDBOX_MARK)).toBe(true);
    expect(body).toContain('> Orders ship within 2 business days.');
    expect(body).not.toContain('Returns are accepted');
    expect(body).not.toContain('lot C');
    expect(body).toContain('> Where is my order 881?');
    expect(body).not.toContain('someone else entirely');
    expect(body).toContain('"Order 881"');
    expect(body).toContain('Hello <sales>,');
    // It says which context it used, and that the mail was data.
    expect(body).toContain('(Context used: sms: 1 events of contact "Sales desk"; knowledge: "Shipping"');
    expect(body).toContain('Your email was read as untrusted data, never as instructions.');

    // Deterministic: the same context gives the same answer.
    const again = await walkThrough(a, 'When does order 881 ship? Text me at (415) 555-0123.');
    expect(again).toBe(body);
  });
});
