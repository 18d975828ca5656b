/**
 * Every stable error `code` the REST API answers, with its HTTP status and meaning (docs/conventions.md,
 * src/domain/errors.ts). The OpenAPI document is generated from this table: a route lists the codes its domain
 * functions raise in `schema.errors`, and the codes every route of its kind can answer (401 UNAUTHENTICATED, 400
 * VALIDATION_FAILED, the Idempotency-Key codes on POST, …) are added by src/rest/openapi.ts. A code missing here is
 * a compile error in the route that names it. The status must be the one the domain error carries.
 */
export const ERROR_CODES = {
  // Any route
  VALIDATION_FAILED: {
    status: 400,
    meaning: 'the request broke one or more input rules; `details` lists each (`code`, `field`, `message`)',
  },
  MALFORMED_JSON: { status: 400, meaning: 'the body is not valid JSON' },
  BAD_REQUEST: { status: 400, meaning: 'the request is malformed in another way (e.g. a bad Content-Length)' },
  BAD_URL: { status: 400, meaning: 'the URL path is not valid percent-encoding (RFC 3986 2.1)' },
  BODY_NOT_ALLOWED: {
    status: 400,
    meaning: 'a body other than none, `{}` or `null` sent to an operation that takes none',
  },
  INVALID_CURSOR: { status: 400, meaning: '`cursor` is not a cursor this endpoint returned' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, meaning: '`Idempotency-Key` is not 1 to 255 characters' },
  UNAUTHENTICATED: {
    status: 401,
    meaning: 'missing, malformed, unknown or revoked API key (answered with `WWW-Authenticate: Bearer`)',
  },
  FORBIDDEN: { status: 403, meaning: 'the API key lacks the scope this operation needs' },
  NOT_FOUND: {
    status: 404,
    meaning: 'no such resource in the caller’s account (another account’s id answers the same)',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    meaning: 'a request with this `Idempotency-Key` is still being processed; retry later',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: 'the body is larger than 1 MiB (40 MiB on email send, reply and forward)',
  },
  RATE_LIMITED: {
    status: 429,
    meaning: 'this API key sent more than RATE_LIMIT_MAX requests in the window; retry after `Retry-After` seconds',
  },
  AUTH_RATE_LIMITED: {
    status: 429,
    meaning: 'too many failed authentications from this client address; retry after `Retry-After` seconds',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'the body is not `application/json`' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    meaning: 'this `Idempotency-Key` was used with another method, path, body or API key',
  },
  IDEMPOTENCY_RECORD_UNREADABLE: {
    status: 422,
    meaning: 'the stored response of this `Idempotency-Key` was encrypted with another `SECRETS_KEY`',
  },

  // Compliance
  BRAND_HAS_CAMPAIGNS: { status: 409, meaning: 'the brand still has campaigns; delete them first' },
  BRAND_PENDING: { status: 409, meaning: 'the brand is already being verified; wait for the decision' },
  BRAND_NOT_ACTIVE: { status: 422, meaning: 'the brand is not ACTIVE' },
  USECASE_NOT_QUALIFIED: { status: 422, meaning: 'the brand does not qualify for this use case' },
  IMMUTABLE_FIELD: { status: 422, meaning: 'a field that cannot change after creation was sent with a new value' },
  NOTHING_TO_NUDGE: { status: 422, meaning: 'no carrier review is pending' },
  NOTHING_TO_APPEAL: { status: 422, meaning: 'no carrier rejected the campaign' },
  NOTHING_TO_EXPEDITE: { status: 422, meaning: 'no carrier review is pending' },
  NUMBER_UNAVAILABLE: {
    status: 409,
    meaning: 'a number is already provisioned (`details` per number); nothing was provisioned',
  },
  REFERENCE_ID_TAKEN: {
    status: 409,
    meaning: 'another brand of the account has this `referenceId` (case-insensitive)',
  },
  NUMBER_COOLING: {
    status: 409,
    meaning: 'a number is cooling down after release from a campaign (`details` per number); nothing was assigned',
  },
  NUMBER_ASSIGNED: { status: 409, meaning: 'the number is assigned to a campaign; remove it first' },
  NUMBER_ASSIGNED_ELSEWHERE: {
    status: 409,
    meaning: 'a number is linked to another campaign; nothing was assigned',
  },
  NUMBERS_NOT_PROVISIONED: {
    status: 422,
    meaning: 'a number is not provisioned in the account (`details` per number); nothing was assigned',
  },
  NUMBERS_NOT_ASSIGNED: {
    status: 422,
    meaning: 'a number is not assigned to this campaign (`details` per number); nothing was removed',
  },

  // Email and agents
  ADDRESS_TAKEN: { status: 409, meaning: 'the address is already in use' },
  CONTACT_EMAIL_TAKEN: {
    status: 409,
    meaning: 'an address belongs to another contact of the account (`field` = `emails.<i>`)',
  },
  CONTACT_PHONE_TAKEN: {
    status: 409,
    meaning: 'a number belongs to another contact of the account (`field` = `phones.<i>`)',
  },
  DOMAIN_NOT_HOSTED: {
    status: 422,
    meaning: 'the domain is not one of `EMAIL_DOMAINS` nor a verified custom domain of the account',
  },
  DOMAIN_NOT_VERIFIED: { status: 422, meaning: 'the account’s custom domain is still `pending`; verify it first' },
  DOMAIN_TAKEN: { status: 409, meaning: 'the domain is configured, another account’s, or already the account’s' },
  FROM_NOT_IDENTITY: {
    status: 422,
    meaning: 'SMTP submission only (answered `553 5.7.1`): MAIL FROM or From is not the authenticated identity',
  },
  DOMAIN_IN_USE: { status: 422, meaning: 'active identities use the domain; deprovision them first' },
  IDENTITY_DEPROVISIONING: { status: 422, meaning: 'the identity is deprovisioning; it neither sends nor receives' },
  TOO_MANY_LABELS: { status: 422, meaning: 'a thread or message would carry more than 100 labels' },
  RECIPIENT_BLOCKED: {
    status: 422,
    meaning: 'a recipient is on the account’s outbound block list (`details` per recipient)',
  },
  RECIPIENT_SUPPRESSED: {
    status: 422,
    meaning: 'a recipient bounced permanently and is on the suppression list (`details` per recipient)',
  },
  DRAFT_INCOMPLETE: {
    status: 422,
    meaning: 'the draft lacks what sending needs (`field`: to, subject or body); sendAt needs a complete draft too',
  },
  DRAFT_SENDING: { status: 409, meaning: 'the draft’s scheduled send is running right now; it is sent or back soon' },
  DRAFT_LIMIT_REACHED: { status: 422, meaning: 'the identity holds 1000 drafts; send or delete some first' },
  ATTACHMENTS_TOO_LARGE: {
    status: 413,
    meaning: 'the attachments of one message exceed 25 MiB decoded (the message names the limit)',
  },
  AGENT_TEXT_MODEL_REQUIRED: { status: 422, meaning: 'the agent has no `textModel`; set one before assigning it' },
  AGENT_ASSIGNED: { status: 409, meaning: 'identities use the agent; unassign it before clearing `textModel`' },
  KNOWLEDGE_LIMIT_REACHED: { status: 422, meaning: 'the agent has the maximum number of knowledge documents' },

  // Webhooks
  URL_NOT_PUBLIC: { status: 422, meaning: 'the webhook URL’s host is a literal loopback, private or reserved address' },
  WEBHOOK_LIMIT_REACHED: { status: 422, meaning: 'the account has the maximum number of webhooks' },
  WEBHOOK_CHANGED: { status: 409, meaning: 'the webhook changed meanwhile; retry' },
  WEBHOOK_INACTIVE: { status: 409, meaning: 'the webhook is disabled; register a new one' },
  DELIVERY_NOT_FAILED: { status: 409, meaning: 'only a failed delivery can be redelivered' },
} as const satisfies Record<string, { status: number; meaning: string }>;

/** A documented error code. */
export type ErrorCode = keyof typeof ERROR_CODES;
