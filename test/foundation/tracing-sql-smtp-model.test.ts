// OpenTelemetry spans for SQL, SMTP sessions and messages, and agent model calls (issue 25 item 9), with an
// in-memory exporter registered as the process's tracer provider (what OTEL_EXPORTER_OTLP_ENDPOINT does with the
// OTLP exporter): a REST request's statements are children of its HTTP span and carry no values; a message
// delivered over real SMTP has a session span, a DATA span under it with the reply code, and its storing statements
// under the DATA span; the agent's answer to it is a `chat <model>` span with the model and provider and no text.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingEnabled } from '../../src/infra/tracing.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { SPF_LOOPBACK } from '../helpers/mail-auth.js';
import { smtpSend } from '../helpers/mail-peers.js';
import { type InMemoryTracing, installInMemoryTracing } from '../helpers/tracing.js';

describe('OpenTelemetry spans for SQL, SMTP and model calls (in-memory exporter)', () => {
  let tracing: InMemoryTracing;
  let t: TestApp;
  let a: TestAccount;
  let dns: TestDnsServer;
  const spans = () => tracing.spans();
  const childrenOf: InMemoryTracing['childrenOf'] = (parent) => tracing.childrenOf(parent);

  beforeAll(async () => {
    expect(tracingEnabled()).toBe(false); // off by default
    tracing = installInMemoryTracing();
    // The loopback client may send for example.com (SPF pass): its mail is authenticated, so the agent answers.
    dns = await startDnsServer({ 'example.com': { TXT: [SPF_LOOPBACK] } });
    // No LLM_BASE_URL: the sandbox model answers. A 64 KiB message limit keeps the oversize case small.
    t = await startApp({ env: { DNS_SERVERS: dns.address, SMTP_MAX_MESSAGE_BYTES: '65536' } });
    a = await t.newAccount();
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
    await tracing?.uninstall(); // later files in this worker run without tracing again
  });

  it('records each SQL statement of a request as a child of its HTTP span, with the statement but no values', async () => {
    const secretName = `Traced Brand ${Date.now().toString(36)}`;
    const created = await a.request('POST', '/api/agents', { name: secretName, textModel: 'm' });
    expect(created.status).toBe(201);
    const http = spans().find((s) => s.name === 'POST /api/agents');
    expect(http).toBeDefined();
    const sql = spans().filter(
      (s) => s.spanContext().traceId === http!.spanContext().traceId && s.attributes['db.system.name'],
    );
    expect(sql.length).toBeGreaterThan(0);
    const insert = sql.find((s) => s.attributes['db.operation.name'] === 'INSERT');
    expect(insert?.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.collection.name': 'agents' });
    expect(insert?.name).toBe('INSERT agents');
    expect(String(insert?.attributes['db.query.text'])).toMatch(/^INSERT INTO/);
    // Parameterized: the value sent is in no statement text.
    for (const s of sql) expect(String(s.attributes['db.query.text'])).not.toContain(secretName);
    // Every statement hangs under the request's span (directly or through another span of it).
    const ids = new Set(
      spans()
        .filter((s) => s.spanContext().traceId === http!.spanContext().traceId)
        .map((s) => s.spanContext().spanId),
    );
    for (const s of sql) expect(ids.has(s.parentSpanContext!.spanId)).toBe(true);
  });

  it('records an SMTP session, its message with the reply, the storing statements and the agent model call', async () => {
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'desk-model' });
    const box = await a.request('POST', '/api/email/identities', {
      localPart: `traced${Date.now().toString(36)}`,
      agentId: agent.body.id,
    });
    expect(box.status).toBe(201);
    const port = t.app.smtpPort()!;
    const info = await smtpSend(port, {
      from: 'peer@example.com',
      to: box.body.address,
      subject: 'Where is my parcel?',
      text: 'Hello, a question about my parcel.',
    });
    expect(info.accepted).toEqual([box.body.address]);

    // The session span ends when the connection closes, just after the client quit: wait for it.
    await expect.poll(() => spans().find((s) => s.name === 'smtp session'), { timeout: 10_000 }).toBeDefined();
    const session = spans().find((s) => s.name === 'smtp session')!;
    expect(session.attributes).toMatchObject({
      'smtp.listener': 'mx',
      'client.address': '127.0.0.1',
      'smtp.messages': 1,
    });
    const [data] = childrenOf(session).filter((s) => s.name === 'smtp DATA');
    expect(data?.attributes).toMatchObject({
      'smtp.mail_from_domain': 'example.com',
      'smtp.rcpt_count': 1,
      'smtp.response.status_code': 250,
    });
    expect(Number(data?.attributes['smtp.message_bytes'])).toBeGreaterThan(30);
    // The message was stored inside its DATA span.
    const stored = childrenOf(data!).filter((s) => s.attributes['db.system.name']);
    expect(stored.some((s) => s.attributes['db.operation.name'] === 'INSERT')).toBe(true);

    // The agent answers through the sandbox model: one model call span, with sizes but no text.
    await expect
      .poll(() => spans().find((s) => s.name === 'chat desk-model'), { timeout: 60_000, interval: 100 })
      .toBeDefined();
    const chat = spans().find((s) => s.name === 'chat desk-model')!;
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'sandbox',
      'gen_ai.request.model': 'desk-model',
    });
    expect(Number(chat.attributes['switchboard.answer_chars'])).toBeGreaterThan(0);
    for (const value of Object.values(chat.attributes)) expect(String(value)).not.toContain('parcel');
  });

  it('marks a refused message: the DATA span of a message over the size limit carries 552 and an error status', async () => {
    const box = await a.request('POST', '/api/email/identities', { localPart: `big${Date.now().toString(36)}` });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.app.smtpPort()!, ignoreTLS: true });
    const limit = t.app.ctx.config.SMTP_MAX_MESSAGE_BYTES;
    // nodemailer sends no SIZE= parameter, so the listener sees the size only while DATA streams.
    await expect(
      transport.sendMail({
        from: 'peer@example.com',
        to: box.body.address,
        subject: 'big',
        text: 'x'.repeat(limit + 10),
      }),
    ).rejects.toMatchObject({ responseCode: 552 });
    transport.close();
    await expect
      .poll(() => spans().find((s) => s.name === 'smtp DATA' && s.attributes['smtp.response.status_code'] === 552), {
        timeout: 10_000,
      })
      .toBeDefined();
    const refused = spans().find((s) => s.attributes['smtp.response.status_code'] === 552)!;
    expect(refused.status.code).toBe(2); // SpanStatusCode.ERROR
  });
});
