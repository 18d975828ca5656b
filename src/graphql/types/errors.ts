// Typed errors of mutations (Pothos errors plugin): each mutation answers `<Verb><Noun>Result`, a union of its
// `<Verb><Noun>Payload` and the expected domain errors below (src/graphql/builder.ts, EXPECTED_ERRORS). They carry
// the same `code`, `field` and `details` as REST's error body (src/domain/errors.ts, src/rest/error-codes.ts).
import {
  ConflictError,
  type DomainError,
  type ErrorDetail,
  ForbiddenError,
  NotFoundError,
  UnprocessableError,
  ValidationError,
} from '../../domain/errors.js';
import { builder } from '../builder.js';

const ErrorDetailRef = builder.objectRef<ErrorDetail>('ErrorDetail').implement({
  description: 'One violation of a validation failure, or the cause for one item (e.g. one number).',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'Stable code, e.g. REQUIRED, INVALID_FORMAT, TOO_LONG.' }),
    field: t.exposeString('field', { description: 'Dotted path of the field, e.g. `sampleMessages.2`.' }),
    message: t.exposeString('message'),
  }),
});

/** The `Error` interface every typed error implements. */
export const ErrorInterface = builder.interfaceRef<DomainError>('Error').implement({
  description:
    'An expected failure of a mutation, answered in `data` instead of `errors`. `code` is the stable code REST ' +
    'answers for the same failure (README, error codes).',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'Stable machine-readable code, e.g. NOT_FOUND, BRAND_HAS_CAMPAIGNS.' }),
    message: t.exposeString('message', { description: 'Human-readable; may change, do not match on it.' }),
    field: t.exposeString('field', { nullable: true, description: 'The input field at fault, when there is one.' }),
    details: t.field({
      type: [ErrorDetailRef],
      description: 'Every violation (validation), or the cause per item (e.g. per number); empty when none.',
      resolve: (e) => e.details ?? [],
    }),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  description: 'VALIDATION_FAILED: the input broke one or more rules; `details` lists each.',
  interfaces: [ErrorInterface],
});
builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: 'NOT_FOUND: no such object in the account (another account’s id answers the same).',
  interfaces: [ErrorInterface],
});
builder.objectType(ConflictError, {
  name: 'ConflictError',
  description:
    'The change conflicts with the current state (REST 409), e.g. BRAND_HAS_CAMPAIGNS, ADDRESS_TAKEN, NUMBER_ASSIGNED.',
  interfaces: [ErrorInterface],
});
builder.objectType(UnprocessableError, {
  name: 'UnprocessableError',
  description:
    'The object’s state does not allow the change (REST 422), e.g. BRAND_NOT_ACTIVE, NOTHING_TO_NUDGE, URL_NOT_PUBLIC.',
  interfaces: [ErrorInterface],
});
builder.objectType(ForbiddenError, {
  name: 'ForbiddenError',
  description: 'FORBIDDEN: the API key lacks the scope the mutation needs.',
  interfaces: [ErrorInterface],
});
