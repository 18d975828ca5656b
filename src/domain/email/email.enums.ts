// The closed value sets of the email area, as the API shows them (README "Message status"; spec 2.6, 2.7, 4.5). The
// GraphQL enums are built from these lists (src/graphql/types/email-*.ts), so a value is written once.

/** Lifecycle of an identity: `active`, then `deprovisioning` after delete until it is removed. */
export const IDENTITY_STATUSES = ['active', 'deprovisioning'] as const;

/** Direction of a stored message: received (`inbound`) or sent by this service (`outbound`). */
export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;

/** Delivery status of a message: `received` (inbound); `queued`, `sent`, `delivered`, `undelivered`, `failed` (outbound). */
export const MESSAGE_STATUSES = ['received', 'queued', 'sent', 'delivered', 'undelivered', 'failed'] as const;

/** State of an agent's answer to an inbound message: `pending`, then `answered`, `skipped` (see reason) or `failed`. */
export const AGENT_ANSWER_STATUSES = ['pending', 'answered', 'skipped', 'failed'] as const;
