import type { Emit } from '../events/event-log.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { messageIdsIn, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import { addSuppressionOnce } from './suppression.store.js';
import { type EmailMessage, threadLabels, writeMessageLabels, writeThreadLabels } from './thread.store.js';

/**
 * Bounces (issue 21 item 5). A delivery status notification (RFC 3464, `multipart/report;
 * report-type=delivery-status`, RFC 6522) is read from the parts mailparser gives (the `message/delivery-status`
 * part and the returned headers); no maintained Node library parses the delivery-status fields themselves, and
 * they are a plain RFC 822-style field list, so {@link parseDeliveryStatus} reads them here.
 */

/** One recipient of a DSN or a refused relay attempt, as `email.bounced` carries it. */
export interface BounceRecipient {
  recipient: string;
  /** RFC 3464 2.3.3: failed | delayed (delivered/relayed/expanded are not bounces and are left out). */
  action: string;
  /** RFC 3463 enhanced status code, e.g. `5.1.1`. */
  status: string;
  diagnosticCode: string | null;
  /** `permanent` for action failed or a 5.x.x status; `transient` otherwise (delayed, 4.x.x). */
  type: 'permanent' | 'transient';
}

/** A parsed DSN: the Message-ID of the message it reports on and its bouncing recipients. */
export interface DeliveryReport {
  originalMessageId: string | null;
  recipients: BounceRecipient[];
}

function fieldBlocks(text: string): Map<string, string>[] {
  // Unfold continuation lines (RFC 5322 2.2.3), then split the groups at blank lines.
  const unfolded = text.replace(/\r\n/g, '\n').replace(/\n[ \t]+/g, ' ');
  return unfolded
    .split(/\n\s*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const at = line.indexOf(':');
        if (at <= 0) continue;
        const name = line.slice(0, at).trim().toLowerCase();
        if (!fields.has(name)) fields.set(name, line.slice(at + 1).trim());
      }
      return fields;
    })
    .filter((f) => f.size > 0);
}

/** The value after `type;` of an RFC 3464 typed field (`rfc822; a@b`, `smtp; 550 …`). */
function typedValue(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const at = v.indexOf(';');
  return (at >= 0 ? v.slice(at + 1) : v).trim();
}

/**
 * The per-recipient fields of an RFC 3464 `message/delivery-status` body: `Final-Recipient` (or
 * `Original-Recipient`), `Action`, `Status`, `Diagnostic-Code`. Only `failed` and `delayed` recipients are returned.
 * Malformed input yields no recipients, never an error.
 */
export function parseDeliveryStatus(text: string): BounceRecipient[] {
  const out: BounceRecipient[] = [];
  for (const f of fieldBlocks(text)) {
    const recipient = typedValue(f.get('final-recipient') ?? f.get('original-recipient'));
    const action = f.get('action')?.toLowerCase().split(/\s/)[0];
    if (!recipient || !action || (action !== 'failed' && action !== 'delayed')) continue;
    const status =
      /^[245]\.\d{1,3}\.\d{1,3}/.exec(f.get('status') ?? '')?.[0] ?? (action === 'failed' ? '5.0.0' : '4.0.0');
    const address = normalizeAddress(recipient.replace(/^<|>$/g, ''));
    if (!address.includes('@') || address.length > 320) continue;
    out.push({
      recipient: address,
      action,
      status,
      diagnosticCode: typedValue(f.get('diagnostic-code'))?.slice(0, 998) ?? null,
      type: action === 'failed' || status.startsWith('5') ? 'permanent' : 'transient',
    });
  }
  return out.slice(0, 100);
}

/**
 * The DSN a message carries, or null when it is not one (not `multipart/report; report-type=delivery-status`, no
 * delivery-status part, or no failed/delayed recipient). The original Message-ID comes from the returned headers
 * (`text/rfc822-headers`), else from the first `Message-ID` field after the report's own header block (the
 * returned `message/rfc822` part).
 */
export function deliveryReportOf(parsed: InboundMessage): DeliveryReport | null {
  const r = parsed.report;
  if (r?.reportType !== 'delivery-status' || !r.deliveryStatus) return null;
  const recipients = parseDeliveryStatus(r.deliveryStatus);
  if (recipients.length === 0) return null;
  const fromHeaders = r.returnedHeaders ? /^message-id:\s*(.*)$/im.exec(r.returnedHeaders)?.[1] : undefined;
  const bodyStart = r.head.search(/\r?\n\r?\n/);
  const fromBody = bodyStart >= 0 ? /^message-id:\s*(.*)$/im.exec(r.head.slice(bodyStart))?.[1] : undefined;
  const originalMessageId = messageIdsIn(fromHeaders ?? fromBody ?? '')[0] ?? null;
  return { originalMessageId, recipients };
}

/**
 * Records bounces of one sent message, in the caller's transaction: label `bounced` on the message, one
 * `email.bounced` event per recipient (`{identityId, threadId, messageId, recipient, action, status,
 * diagnosticCode, type}`), and each permanent recipient on the account's suppression list (kept once per
 * address; the first bounce's details stay).
 */
export async function recordBounces(
  tx: Tx,
  emit: Emit,
  message: EmailMessage,
  recipients: BounceRecipient[],
  reason: 'bounce' | 'relay_rejected',
  now: Date,
): Promise<void> {
  if (recipients.length === 0) return;
  if (!message.labels.includes('bounced')) {
    await writeMessageLabels(tx, message.id, [...message.labels, 'bounced']);
  }
  const labels = await threadLabels(tx, message.threadId);
  if (labels && !labels.includes('bounced')) await writeThreadLabels(tx, message.threadId, [...labels, 'bounced']);
  for (const b of recipients) {
    await emit(message.accountId, 'email.bounced', {
      event: 'email.bounced',
      data: {
        identityId: message.identityId,
        threadId: message.threadId,
        messageId: message.messageId,
        recipient: b.recipient,
        action: b.action,
        status: b.status,
        diagnosticCode: b.diagnosticCode,
        type: b.type,
      },
    });
    if (b.type !== 'permanent') continue;
    await addSuppressionOnce(tx, {
      id: uuidv7(),
      accountId: message.accountId,
      address: b.recipient,
      reason,
      status: b.status,
      diagnosticCode: b.diagnosticCode,
      messageId: message.messageId,
      createdAt: now,
    });
  }
}

/** The RFC 3463 status in an SMTP reply (`550 5.1.1 …`), or `5.0.0` / `4.0.0` from its code. */
export function statusOfReply(reply: string, code: number | undefined): string {
  return /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(reply)?.[1] ?? ((code ?? 500) >= 500 ? '5.0.0' : '4.0.0');
}
