import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { SMTPServer } from 'smtp-server';

/** One message the sink accepted. */
export interface SinkMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  parsed: ParsedMail;
}

/** A real SMTP server on 127.0.0.1:0 standing in as the outbound relay. */
export interface SmtpSink {
  port: number;
  url: string;
  messages: SinkMessage[];
  /** Makes RCPT answer with this code/message from now on (undefined: accept). */
  rejectWith(code: number | undefined, message?: string): void;
  close(): Promise<void>;
}

/** Starts an {@link SmtpSink} that records every message (parsed by mailparser). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  let reject: { code: number; message: string } | undefined;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, cb) {
      if (reject) cb(Object.assign(new Error(reject.message), { responseCode: reject.code }));
      else cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks);
        messages.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: raw.toString('utf8'),
          parsed: await simpleParser(raw),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejectWith(code, message = 'rejected') {
      reject = code === undefined ? undefined : { code, message };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sends one message to the app's SMTP listener with a real nodemailer SMTP client. @returns nodemailer's info. */
export async function smtpSend(port: number, mail: SendMailOptions) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    tls: { rejectUnauthorized: false },
  });
  try {
    return await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

/** One chat-completions request the fake model received. */
export interface ModelRequest {
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[] };
}

/** A loopback HTTP server speaking the OpenAI chat-completions protocol. */
export interface FakeModel {
  baseURL: string;
  requests: ModelRequest[];
  /** What the next answers are: a text, or an HTTP error status. Empty queue: answers "Thanks for your mail." */
  respond: (req: ModelRequest) => { status: number; text?: string };
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a {@link FakeModel} on 127.0.0.1:0; `baseURL` ends in /v1 like OpenAI's. */
export async function startFakeModel(): Promise<FakeModel> {
  const model: FakeModel = {
    baseURL: '',
    requests: [],
    respond: () => ({ status: 200, text: 'Thanks for your mail.' }),
    close: async () => {},
  };
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const request: ModelRequest = { authorization: req.headers.authorization, body: JSON.parse(raw) };
    model.requests.push(request);
    const answer = model.respond(request);
    if (answer.status !== 200) {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'model unavailable', type: 'server_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${model.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  model.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return model;
}
