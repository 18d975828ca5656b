/**
 * Domain errors: every failure a client can cause has a stable machine-readable `code`, the `field` at fault when
 * there is one, and for validation every violation in `details`. REST maps them to one body shape
 * (`{"error": {code, message, field?, details?}}`, src/rest/errors.ts) and GraphQL to `extensions`
 * (src/graphql/errors.ts). The HTTP status lives here so both surfaces agree.
 */

/** One violation inside a validation failure. */
export interface ErrorDetail {
  /** Stable code, e.g. REQUIRED, INVALID_FORMAT, INVALID_ENUM_VALUE, TOO_SHORT, TOO_LONG, TOO_FEW, TOO_MANY. */
  code: string;
  /** Dotted path of the field, e.g. `sampleMessages.2`. */
  field: string;
  message: string;
}

/** Base class; `status` is the HTTP status REST answers with. */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly field?: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400 VALIDATION_FAILED: the request broke one or more input rules; `details` lists all of them. */
export class ValidationError extends DomainError {
  constructor(details: ErrorDetail[], message?: string) {
    const first = details[0];
    super(
      'VALIDATION_FAILED',
      message ??
        (details.length === 1 && first
          ? `${first.field}: ${first.message}`
          : `${details.length} problems: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`),
      400,
      first?.field,
      details,
    );
  }

  /** A single-field validation failure. */
  static field(field: string, code: string, message: string): ValidationError {
    return new ValidationError([{ field, code, message }]);
  }
}

/** 400 with a specific code (e.g. MALFORMED_JSON, INVALID_CURSOR) for bad requests that are not field rules. */
export class BadRequestError extends DomainError {
  constructor(code: string, message: string, field?: string) {
    super(code, message, 400, field);
  }
}

/** 401 UNAUTHENTICATED: missing, malformed, unknown or revoked API key. */
export class UnauthenticatedError extends DomainError {
  constructor(message = 'A valid API key is required: send "Authorization: Bearer <API_KEY>".') {
    super('UNAUTHENTICATED', message, 401);
  }
}

/** 403 FORBIDDEN: the key is valid but lacks the scope the operation needs. */
export class ForbiddenError extends DomainError {
  constructor(scope: string) {
    super('FORBIDDEN', `This API key lacks the "${scope}" scope.`, 403);
  }
}

/** 404 NOT_FOUND: no such resource in the caller's account (another account's id answers the same). */
export class NotFoundError extends DomainError {
  constructor(resource: string, id: string, field?: string) {
    super('NOT_FOUND', `${resource} ${id} not found`, 404, field);
  }
}

/** 409 with a specific code: the request conflicts with the current state. */
export class ConflictError extends DomainError {
  constructor(code: string, message: string, field?: string, details?: ErrorDetail[]) {
    super(code, message, 409, field, details);
  }
}

/**
 * 413 with a specific code: the request is well-formed but carries more than a limit allows (e.g. 25 MiB of
 * attachments, issue 21). REST only in practice: GraphQL's request size bound (1 MiB) is far below these limits.
 */
export class PayloadTooLargeError extends DomainError {
  constructor(code: string, message: string, field?: string) {
    super(code, message, 413, field);
  }
}

/** 422 with a specific code: well-formed, but the resource's state does not allow the operation. */
export class UnprocessableError extends DomainError {
  constructor(code: string, message: string, field?: string, details?: ErrorDetail[]) {
    super(code, message, 422, field, details);
  }
}

/**
 * 429: too many requests. `code` is RATE_LIMITED (an API key over its request budget) or AUTH_RATE_LIMITED (a
 * client address over its failed-authentication budget); `retryAfterSeconds` goes out as `Retry-After`.
 */
export class RateLimitedError extends DomainError {
  constructor(
    code: 'RATE_LIMITED' | 'AUTH_RATE_LIMITED',
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message, 429);
  }
}
