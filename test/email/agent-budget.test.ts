import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestApp, usingPostgres } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { SPF_LOOPBACK } from '../helpers/mail-auth.js';
import { smtpSend } from '../helpers/mail-peers.js';

// Two instances need one shared database, which only PostgreSQL gives (PGlite lives inside one process).
describe.skipIf(!usingPostgres)('agent reply budget across two instances (PostgreSQL)', () => {
  let t1: TestApp;
  let t2: TestApp;
  let model: Server;
  let baseURL: string;
  let dns: TestDnsServer;
  const clock = new ManualClock();
  let requests = 0;
  let held: (() => void)[] = [];
  /** Answer once this many requests are held (Infinity: only on release()). */
  let holdUntil = 2;
  const release = () => {
    for (const h of held) h();
    held = [];
  };

  beforeAll(async () => {
    // A chat-completions peer that answers only once two requests are in flight (or after 5 s, should the second
    // never come), so both instances have passed the early budget check before either stores its answer.
    model = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        const answer = () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: `chatcmpl-${requests}`,
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: 'm',
              choices: [{ index: 0, message: { role: 'assistant', content: 'On it.' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            }),
          );
        };
        held.push(answer);
        if (held.length >= holdUntil) release();
        else setTimeout(release, 5000).unref();
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    // The peers' domain lets the loopback client send for it (SPF pass, no DMARC): authenticated senders.
    dns = await startDnsServer({ 'example.com': { TXT: [SPF_LOOPBACK] } });
    const env = {
      LLM_BASE_URL: baseURL,
      LLM_API_KEY: 'k',
      AGENT_REPLIES_PER_SENDER: '1',
      DNS_SERVERS: dns.address,
    };
    t1 = await startApp({ clock, env });
    t2 = await startApp({ clock, env, startWorkers: false });
  });
  afterAll(async () => {
    await t1?.close();
    await t2?.close();
    await dns?.close();
    await new Promise<void>((resolve) => (model ? model.close(() => resolve()) : resolve()));
  });

  it('two instances answering one sender at the same time stay within AGENT_REPLIES_PER_SENDER', async () => {
    const a = await t1.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'm' });
    const box = await a.request('POST', '/api/email/identities', {
      localPart: `budget${Date.now().toString(36)}`,
      agentId: agent.body.id,
    });
    const port = t1.app.smtpPort()!;
    for (const subject of ['First', 'Second']) {
      await smtpSend(port, { from: 'peer@example.com', to: box.body.address, subject, text: 'Hello?' });
    }
    await Promise.all([t1.drain(), t2.drain()]);
    expect(requests).toBe(2); // both instances passed the early check and asked the model

    const list = await a.request('GET', `/api/email/identities/${box.body.id}/threads`);
    const answers: { status: string; reason: string | null }[] = [];
    for (const th of list.body.threads as { threadId: string }[]) {
      const detail = await a.request('GET', `/api/email/identities/${box.body.id}/threads/${th.threadId}`);
      for (const m of detail.body.messages) if (m.agent) answers.push(m.agent);
    }
    expect(answers.map((x) => x.status).sort()).toEqual(['answered', 'skipped']);
    expect(answers.find((x) => x.status === 'skipped')).toMatchObject({ reason: 'REPLY_BUDGET_EXHAUSTED' });
  });

  it('an instance whose claim ran out cannot store a second answer or overwrite the new owner', async () => {
    const a = await t1.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'm' });
    const box = await a.request('POST', '/api/email/identities', {
      localPart: `fence${Date.now().toString(36)}`,
      agentId: agent.body.id,
    });
    await smtpSend(t1.app.smtpPort()!, {
      from: 'slow@example.com',
      to: box.body.address,
      subject: 'Q',
      text: '?',
    });
    holdUntil = Number.POSITIVE_INFINITY;
    const before = requests;
    const first = t1.drain(); // claims the job; its model call hangs
    while (requests === before) await new Promise((r) => setTimeout(r, 10));
    holdUntil = 1;
    clock.advance(6 * 60_000); // past the 5-min claim lease
    await t2.drain(); // takes the job over and answers it
    release();
    await first;
    holdUntil = 2;

    const [th] = (await a.request('GET', `/api/email/identities/${box.body.id}/threads`)).body.threads;
    const detail = await a.request('GET', `/api/email/identities/${box.body.id}/threads/${th.threadId}`);
    const outbound = detail.body.messages.filter((m: { direction: string }) => m.direction === 'outbound');
    expect(outbound).toHaveLength(1);
    expect(detail.body.messages[0].agent).toMatchObject({ status: 'answered' });
  });
});
