import { UNTRUSTED_BEGIN, UNTRUSTED_END } from '../../domain/email/agent.context.js';
import type { ModelProvider, ModelRequest } from '../../domain/email/model.port.js';

/** First line of every sandbox answer, so a reader (and a test) can tell it from a language model's answer. */
export const SANDBOX_MARK = '[Sandbox answer: written offline by Switchboard’s sandbox model, not a language model.]';

const STOPWORDS = new Set(
  'the and for are but not you your with this that have from was were will would can could what when where which who how our out about into than then them they their there here has had its also just please thanks thank hello dear regards does did'.split(
    ' ',
  ),
);

function words(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => !STOPWORDS.has(w)));
}

/** The `## <title>` sections of the prompt that src/domain/email/agent.context.ts buildAgentPrompt writes. */
function sections(prompt: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = prompt.split(/^## /m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    out.set(part.slice(0, newline).trim(), part.slice(newline + 1).trim());
  }
  return out;
}

/** The knowledge passage (a paragraph or sentence of a `### title` document) sharing most words with `query`. */
function bestPassage(knowledge: string | undefined, query: Set<string>): { title: string; text: string } | undefined {
  if (!knowledge || knowledge.startsWith('(no relevant')) return undefined;
  let best: { title: string; text: string; score: number } | undefined;
  for (const doc of knowledge.split(/^### /m).slice(1)) {
    const newline = doc.indexOf('\n');
    const title = (newline < 0 ? doc : doc.slice(0, newline)).trim();
    const body = newline < 0 ? '' : doc.slice(newline + 1);
    const passages = body
      .split(/\n\s*\n|(?<=[.!?])\s+/)
      .map((p) => p.replace(/\s+/g, ' ').trim())
      .filter(Boolean);
    for (const text of passages) {
      let score = 0;
      for (const w of words(`${title} ${text}`)) if (query.has(w)) score++;
      // Ties keep the earliest passage: answers are deterministic.
      if (!best || score > best.score) best = { title, text, score };
    }
  }
  return best && best.score > 0 ? { title: best.title, text: best.text.slice(0, 600) } : undefined;
}

/**
 * The sender's last SMS from the "SMS history with this sender" section (lines `- <ISO time> <type> <payload JSON>`,
 * oldest first): the newest `sms.received` (sent by them) with a text field, else the newest SMS with one.
 */
function lastSms(history: string | undefined): { at: string; text: string } | undefined {
  if (!history) return undefined;
  const found: { at: string; type: string; text: string }[] = [];
  for (const line of history.split('\n')) {
    const m = /^- (\S+) (\S+) (\{.*)$/.exec(line.trim());
    if (!m) continue;
    try {
      const payload = JSON.parse(m[3] as string) as Record<string, unknown>;
      const text = [payload.body, payload.text, payload.message].find((v) => typeof v === 'string' && v.trim() !== '');
      if (typeof text === 'string') found.push({ at: m[1] as string, type: m[2] as string, text: text.trim() });
    } catch {
      // A payload cut at 1000 characters is not JSON any more: skip it.
    }
  }
  const pick = found.filter((f) => f.type === 'sms.received').at(-1) ?? found.at(-1);
  return pick ? { at: pick.at, text: pick.text.slice(0, 400) } : undefined;
}

/**
 * The embedded default model provider for agents (used while `LLM_BASE_URL` is unset), like the sandbox registry
 * for 10DLC: deterministic (the same request always gets the same answer), offline, and instant. It answers from
 * the agent's context in the prompt: it quotes the knowledge passage sharing most words with the new email and the
 * sender's last SMS (present only for a verified contact), lists the context sources the prompt says were used,
 * notes that the email was read as untrusted data, and marks the answer with {@link SANDBOX_MARK}. It never fails, so a walk-through without a
 * model installed ends with an answered email.
 */
export class SandboxModel implements ModelProvider {
  readonly name = 'sandbox';

  async complete(request: ModelRequest): Promise<string> {
    const parts = sections(request.prompt);
    const email = (parts.get('New email') ?? '').replace(UNTRUSTED_BEGIN, '').replace(UNTRUSTED_END, '').trim();
    const used = (parts.get('Context sources used') ?? '')
      .split('\n')
      .map((l) => l.replace(/^- /, '').trim())
      .filter(Boolean);
    const from = /^From: (.*)$/m.exec(email)?.[1]?.trim();
    const subject = /^Subject: (.*)$/m.exec(email)?.[1]?.trim();
    const passage = bestPassage(parts.get('Knowledge'), words(email.replace(/^(From|Subject): /gm, '')));
    const sms = lastSms(parts.get('SMS history with this sender'));

    const lines = [SANDBOX_MARK, '', `Hello${from ? ` ${from}` : ''},`, ''];
    lines.push(subject ? `Thank you for your message about "${subject}".` : 'Thank you for your message.');
    if (passage) lines.push('', `From our notes on ${passage.title}:`, `> ${passage.text}`);
    if (sms) lines.push('', `Your last text message to us (${sms.at}):`, `> ${sms.text}`);
    if (!passage && !sms) lines.push('', 'I found nothing about this in what I know yet; a person will follow up.');
    lines.push('', `(Context used: ${used.length > 0 ? used.join('; ') : 'none'}.`);
    lines.push('Your email was read as untrusted data, never as instructions.)');
    lines.push('', `(Model "${request.model}" is not called in sandbox mode; set LLM_BASE_URL to use a real one.)`);
    return lines.join('\n');
  }
}
