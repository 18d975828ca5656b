import { findPhoneNumbersInText } from 'libphonenumber-js';
import type { AppContext } from '../../app-context.js';
import type { Agent, EmailMessage, KnowledgeDocument } from '../../generated/prisma/client.js';
import type { ContextSource } from './email.schemas.js';

/** Most SMS / call events, knowledge documents and earlier thread messages put into one prompt. */
export const CONTEXT_LIMITS = { events: 20, eventScan: 1000, documents: 3, documentChars: 4000, thread: 10 };

const STOPWORDS = new Set(
  "the and for are but not you your with this that have from was were will would can could what when where which who how our out about into than then them they their there here has had its it's also just please thanks thank hello dear regards".split(
    ' ',
  ),
);

/** Lower-case word tokens of at least 3 letters/digits, without common stopwords. */
export function keywords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [];
  return new Set(words.filter((w) => !STOPWORDS.has(w)));
}

/**
 * How an email sender maps to SMS and call events (README "Agents"): the identifiers are the sender's address and
 * every phone number written in the message (subject or body, parsed as E.164 with US as default country). An event
 * involves the sender when any top-level string field of its payload (e.g. `from`, `to`, `email`) equals one of
 * them (addresses case-insensitively, numbers after E.164 normalisation).
 */
export function senderIdentifiers(sender: string, text: string): Set<string> {
  const ids = new Set<string>([sender.toLowerCase()]);
  for (const found of findPhoneNumbersInText(text, 'US')) ids.add(found.number.number);
  return ids;
}

function involves(payload: unknown, ids: Set<string>): boolean {
  if (!payload || typeof payload !== 'object') return false;
  for (const value of Object.values(payload as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    const v = value.trim();
    if (ids.has(v.toLowerCase()) || ids.has(v.replace(/[\s().-]/g, ''))) return true;
  }
  return false;
}

/**
 * Knowledge relevance: documents scored by how many distinct keywords of the message occur in them (title words
 * count twice); the best {@link CONTEXT_LIMITS}.documents with a score above 0, each cut to 4000 characters.
 */
export function relevantDocuments(docs: KnowledgeDocument[], text: string): KnowledgeDocument[] {
  const query = keywords(text);
  return docs
    .map((d) => {
      const title = keywords(d.title);
      const content = keywords(d.content);
      let score = 0;
      for (const w of query) score += (title.has(w) ? 2 : 0) + (content.has(w) ? 1 : 0);
      return { d, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.d.createdAt.getTime() - b.d.createdAt.getTime())
    .slice(0, CONTEXT_LIMITS.documents)
    .map((s) => s.d);
}

/** The prompt for one answer: the system prompt and one user message carrying context and the thread. */
export interface AgentPrompt {
  system: string;
  prompt: string;
}

/**
 * Spec 6.3 step 2: builds the enriched prompt from the agent's contextSources — `sms` (sms.* events involving the
 * sender), `calls` (voice.* events involving the sender, transcripts included as sent), `knowledge` (relevant
 * documents) — plus the thread so far and the new message.
 */
export async function buildAgentPrompt(
  ctx: AppContext,
  agent: Agent,
  identityAddress: string,
  inbound: EmailMessage,
): Promise<AgentPrompt> {
  const sources = new Set(agent.contextSources as ContextSource[]);
  const text = `${inbound.subject}\n${inbound.body}`;
  const sections: string[] = [];
  const channels = [...(sources.has('sms') ? ['sms'] : []), ...(sources.has('calls') ? ['voice'] : [])];
  if (channels.length > 0) {
    const ids = senderIdentifiers(inbound.from, text);
    const events = await ctx.db.event.findMany({
      where: { accountId: inbound.accountId, channel: { in: channels } },
      orderBy: { id: 'desc' },
      take: CONTEXT_LIMITS.eventScan,
    });
    for (const channel of channels) {
      const lines = events
        .filter((e) => e.channel === channel && involves(e.payload, ids))
        .slice(0, CONTEXT_LIMITS.events)
        .reverse()
        .map((e) => `- ${e.createdAt.toISOString()} ${e.eventType} ${JSON.stringify(e.payload).slice(0, 1000)}`);
      const title = channel === 'sms' ? 'SMS history with this sender' : 'Call history with this sender';
      sections.push(`## ${title}\n${lines.length > 0 ? lines.join('\n') : '(none)'}`);
    }
  }
  if (sources.has('knowledge')) {
    const docs = await ctx.db.knowledgeDocument.findMany({ where: { agentId: agent.id } });
    const relevant = relevantDocuments(docs, text);
    sections.push(
      `## Knowledge\n${
        relevant.length > 0
          ? relevant.map((d) => `### ${d.title}\n${d.content.slice(0, CONTEXT_LIMITS.documentChars)}`).join('\n\n')
          : '(no relevant documents)'
      }`,
    );
  }
  const earlier = await ctx.db.emailMessage.findMany({
    where: { threadId: inbound.threadId, id: { not: inbound.id } },
    orderBy: [{ sentAt: 'desc' }, { id: 'desc' }],
    take: CONTEXT_LIMITS.thread,
  });
  if (earlier.length > 0) {
    sections.push(
      `## Earlier messages in this thread (oldest first)\n${earlier
        .reverse()
        .map((m) => `From: ${m.from}\nSubject: ${m.subject}\n\n${(m.extractedText || m.body).slice(0, 4000)}`)
        .join('\n\n---\n\n')}`,
    );
  }
  // The new text of the mail without quoted history and signature (issue 21: extractedText).
  sections.push(
    `## New email\nFrom: ${inbound.from}\nSubject: ${inbound.subject}\n\n${inbound.extractedText || inbound.body}`,
  );
  return {
    system:
      `${agent.systemPrompt}\n\nYou answer email sent to ${identityAddress}. Write only the plain-text body of your reply.`.trim(),
    prompt: sections.join('\n\n'),
  };
}
