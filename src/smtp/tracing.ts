// SMTP spans, only while tracing is on (src/infra/tracing.ts): one SERVER span per SMTP session, from the client's
// connection to its close (`smtp session`), and one per message, from DATA to its reply (`smtp DATA`), a child of
// the session's span. The message's own work (storing, parsing, sender authentication, SQL) runs inside the message
// span, so its spans are the message's children.
import type { Span } from '@opentelemetry/api';
import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { context, SpanKind, SpanStatusCode, trace, tracer } from '../infra/tracing.js';

/** The SMTPServer handlers the spans wrap (each set from the options or smtp-server's default). */
interface Handlers {
  onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void;
  onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void): void;
  onClose(session: SMTPServerSession, callback?: () => void): void;
}

/** The SMTP reply code an error passed to an smtp-server callback becomes (smtp-server answers 450 without one). */
function replyCode(err: Error | null | undefined): number {
  if (!err) return 250;
  return (err as { responseCode?: number }).responseCode ?? 450;
}

/**
 * Records the spans above for `server` (call once, after the SMTP edge is attached, before it listens).
 * Attributes: `smtp.listener` (`mx` or `submission`), `client.address`, `smtp.session_id`; on the session span
 * `smtp.messages` (DATA commands seen) when it ends; on the message span `smtp.mail_from`'s domain
 * (`smtp.mail_from_domain`; never the local part), `smtp.rcpt_count`, `smtp.message_bytes` and
 * `smtp.response.status_code` (an error status for 4xx/5xx).
 */
export function traceSmtp(server: SMTPServer, listener: 'mx' | 'submission'): void {
  const handlers = server as unknown as Handlers;
  const sessions = new Map<string, { span: Span; messages: number }>();
  const onConnect = handlers.onConnect.bind(server);
  handlers.onConnect = (session, callback) => {
    const span = tracer().startSpan(
      'smtp session',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'smtp.listener': listener,
          'client.address': session.remoteAddress,
          'smtp.session_id': session.id,
        },
      },
      context.active(),
    );
    sessions.set(session.id, { span, messages: 0 });
    onConnect(session, callback);
  };
  const onClose = handlers.onClose.bind(server);
  handlers.onClose = (session, callback) => {
    const entry = sessions.get(session.id);
    if (entry) {
      sessions.delete(session.id);
      entry.span.setAttribute('smtp.messages', entry.messages);
      entry.span.end();
    }
    onClose(session, callback);
  };
  const onData = handlers.onData.bind(server);
  handlers.onData = (stream, session, callback) => {
    const entry = sessions.get(session.id);
    if (entry) entry.messages++;
    const parent = entry ? trace.setSpan(context.active(), entry.span) : context.active();
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const span = tracer().startSpan(
      'smtp DATA',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'smtp.listener': listener,
          'client.address': session.remoteAddress,
          'smtp.session_id': session.id,
          'smtp.mail_from_domain': mailFrom.includes('@') ? mailFrom.slice(mailFrom.lastIndexOf('@') + 1) : '',
          'smtp.rcpt_count': session.envelope.rcptTo.length,
        },
      },
      parent,
    );
    context.with(trace.setSpan(parent, span), () =>
      onData(stream, session, (err) => {
        const code = replyCode(err);
        span.setAttribute('smtp.message_bytes', stream.byteLength ?? 0); // counted by smtp-server's DATA stream
        span.setAttribute('smtp.response.status_code', code);
        if (code >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: err?.message ?? '' });
        span.end();
        callback(err);
      }),
    );
  };
}
