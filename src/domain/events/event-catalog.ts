/**
 * The event catalog: every channel and event type the service knows, in one place. Each type belongs to exactly
 * one channel. Sources: spec 6.1 (webhook event types) and 6.2 (stream channels); the `10dlc` and `email`
 * channels and the names the spec leaves "not shown" (ivr, webhook, reputation) are this service's own
 * (README "Events"). The 10DLC names follow the `10dlc.` prefix that CPaaS APIs use, so they never collide with
 * the spec's voice-campaign `campaign.*` events.
 */
export const EVENT_CATALOG = {
  sms: {
    description: 'SMS send, receive, delivery, failure',
    types: ['sms.sent', 'sms.received', 'sms.delivered', 'sms.failed'],
  },
  voice: {
    description: 'Call lifecycle',
    types: [
      'voice.initiated',
      'voice.ai.initiated',
      'voice.inbound',
      'voice.answered',
      'voice.completed',
      'voice.ai.completed',
      'voice.failed',
      'voice.amd',
      'voice.dtmf',
    ],
  },
  campaign: {
    description: 'Call-campaign outcomes, prospect updates, stats',
    types: [
      'campaign.call.initiated',
      'campaign.call.voicemail',
      'campaign.call.human_connected',
      'campaign.call.human_hangup',
      'campaign.call.no_answer',
      'campaign.call.busy',
      'campaign.call.failed',
      'campaign.prospect.dnc',
      'campaign.stats.updated',
      'campaign.paused.no_dids',
    ],
  },
  did: {
    description: 'Number purchases, releases, state changes (warming, active, cooling)',
    types: ['did.purchased', 'did.released', 'did.state_changed'],
  },
  ivr: {
    description: 'IVR session events',
    types: ['ivr.session.started', 'ivr.input.received', 'ivr.session.completed'],
  },
  billing: {
    description: 'Usage tracking',
    types: ['billing.usage'],
  },
  webhook: {
    description: 'Webhook endpoints (created, updated, deleted) and their delivery health',
    types: ['webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.delivery.failed', 'webhook.disabled'],
  },
  reputation: {
    description: 'DID reputation changes',
    types: ['reputation.score_changed', 'reputation.flagged', 'reputation.cleared'],
  },
  '10dlc': {
    description: '10DLC brand, vetting, campaign, carrier and number-assignment changes',
    types: [
      '10dlc.brand.registered',
      '10dlc.brand.updated',
      '10dlc.brand.status_changed',
      '10dlc.brand.deleted',
      '10dlc.vetting.requested',
      '10dlc.vetting.completed',
      '10dlc.campaign.created',
      '10dlc.campaign.updated',
      '10dlc.campaign.status_changed',
      '10dlc.campaign.deleted',
      '10dlc.campaign.nudged',
      '10dlc.carrier.status_changed',
      '10dlc.numbers.assigned',
      '10dlc.numbers.removed',
    ],
  },
  email: {
    description:
      'Identities (created, updated, deprovisioned), inbound mail, agent answers, outbound delivery, bounces, custom domains verified, drafts, role mail of custom domains',
    types: [
      'email.identity.created',
      'email.identity.updated',
      'email.identity.deprovisioned',
      'email.received',
      'email.agent.response',
      'email.agent.failed',
      'email.agent.skipped',
      'email.sent',
      'email.delivery_failed',
      'email.domain.verified',
      'email.bounced',
      'email.draft.created',
      'email.draft.updated',
      'email.draft.sent',
      'email.draft.deleted',
      'email.draft.failed',
      'email.role_mail.received',
    ],
  },
} as const satisfies Record<string, { description: string; types: readonly string[] }>;

/** A channel name (spec 6.2 plus `10dlc` and `email`). */
export type Channel = keyof typeof EVENT_CATALOG;
/** An event type of the catalog. */
export type EventType = (typeof EVENT_CATALOG)[Channel]['types'][number];

/** Every channel, in catalog order. */
export const CHANNELS = Object.keys(EVENT_CATALOG) as Channel[];

const channelOfType = new Map<string, Channel>();
for (const channel of CHANNELS) {
  for (const type of EVENT_CATALOG[channel].types) {
    if (channelOfType.has(type)) throw new Error(`event type ${type} is in two channels`);
    channelOfType.set(type, channel);
  }
}

/** Every event type, in catalog order. */
export const EVENT_TYPES = [...channelOfType.keys()] as EventType[];

/** The channel of `type`, or undefined when `type` is not in the catalog. */
export function channelOf(type: string): Channel | undefined {
  return channelOfType.get(type);
}

/** Whether `type` is a catalog event type. */
export function isEventType(type: string): type is EventType {
  return channelOfType.has(type);
}

/** Whether `name` is a channel. */
export function isChannel(name: string): name is Channel {
  return Object.hasOwn(EVENT_CATALOG, name);
}

/**
 * Types only this service emits, as facts of its own state: the `10dlc`, `email` and `webhook` channels and number
 * provisioning (`did.purchased`, `did.released`, emitted by /api/numbers). The ingest endpoint refuses them, so a
 * key with `events:write` cannot forge a registry decision or a delivery-health event that webhooks would then sign.
 */
export function isServiceEmitted(type: string): boolean {
  const channel = channelOf(type);
  return (
    channel === '10dlc' ||
    channel === 'email' ||
    channel === 'webhook' ||
    type === 'did.purchased' ||
    type === 'did.released'
  );
}
