import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, type ErrorDetail, ValidationError } from '../domain/errors.js';
import { badTextFields } from '../domain/validation.js';
import type { ErrorBody } from './errors.js';

/**
 * Rules every REST request meets before a route sees it (issue 13: any input answers a 4xx in the one error body,
 * never a 5xx, and changes nothing). Wired by the HTTP host next to the JSON parser and error handling.
 */

/**
 * Longest accepted path parameter, in characters, before the router gives up (Fastify's default is 100 and
 * answers its own 414). Set high so every over-long id reaches the route's zod schema (`resourceId`, 100
 * characters) and is refused there as a 400 naming the parameter; Node's 16 KiB header limit bounds the URL anyway.
 */
export const MAX_PARAM_LENGTH = 16_384;

/**
 * Longest accepted query-string value (and name), in characters. The longest real one is a cursor (at most 500)
 * or a stream token; anything longer is refused before a route reads it (issue 26), so no query value of any
 * route, declared or not, reaches the database or a log line at megabyte size.
 */
export const MAX_QUERY_VALUE_LENGTH = 2_048;

/**
 * What is wrong with a parsed query string, per parameter (`query.<name>`): U+0000 (PostgreSQL error 22021
 * answered 500 for `GET /compliance/campaigns?brandId=%00`, issue 26) and lone surrogates, as in JSON bodies
 * (badTextFields), and values or names over MAX_QUERY_VALUE_LENGTH characters (TOO_LONG). Repeated parameters
 * (`?a=1&a=2`) are checked value by value; the route's own schema decides whether it takes several.
 */
export function badQueryFields(query: unknown): ErrorDetail[] {
  if (!query || typeof query !== 'object') return [];
  const out = badTextFields(query, ['query']);
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (out.length >= 20) break;
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    if (name.length > MAX_QUERY_VALUE_LENGTH) {
      out.push({
        code: 'TOO_LONG',
        field: `query.${shown}`,
        message: `parameter name is longer than ${MAX_QUERY_VALUE_LENGTH} characters`,
      });
      continue;
    }
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && v.length > MAX_QUERY_VALUE_LENGTH)) {
      out.push({
        code: 'TOO_LONG',
        field: `query.${shown}`,
        message: `must be at most ${MAX_QUERY_VALUE_LENGTH} characters`,
      });
    }
  }
  return out;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Whether the percent-escapes of a query component decode to UTF-8 (a stray `%` not followed by hex is left). */
function validUtf8Escapes(component: string): boolean {
  if (!component.includes('%')) return true;
  const bytes: number[] = [];
  for (let i = 0; i < component.length; i++) {
    const hex = component[i] === '%' ? component.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(component[i] as string, 'utf8'));
  }
  try {
    STRICT_UTF8.decode(Uint8Array.from(bytes));
    return true;
  } catch {
    return false;
  }
}

/**
 * Parameters of a raw query string (what follows `?`) whose percent-escapes are not UTF-8: a lone surrogate can
 * only reach a URL as its 3-byte escape (`%ED%A0%80` for U+D800), which is not UTF-8, and the query parser kept
 * such values as literal escapes (a lone surrogate in a JSON body is refused, so it is here too; issue 26). Detail
 * code INVALID_CHARACTER, field `query.<name>` (the name as sent, when the name itself is the bad part).
 */
export function badQueryEncoding(rawQuery: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  if (!rawQuery.includes('%')) return out;
  for (const pair of rawQuery.split('&')) {
    if (out.length >= 20) break;
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (validUtf8Escapes(name) && validUtf8Escapes(value)) continue;
    let shown = name;
    try {
      shown = decodeURIComponent(name.replaceAll('+', ' '));
    } catch {}
    if (shown.length > 64) shown = `${shown.slice(0, 64)}…`;
    out.push({
      code: 'INVALID_CHARACTER',
      field: `query.${shown}`,
      message: 'must be percent-encoded UTF-8 (a lone UTF-16 surrogate, %ED%A0%80 to %ED%BF%BF, is not)',
    });
  }
  return out;
}

/** Whether a parsed query string has no parameter (Fastify parses an absent one to `{}`). */
export function isEmptyQuery(query: unknown): boolean {
  if (!query || typeof query !== 'object') return true;
  for (const _ in query) return false;
  return true;
}

/** Whether a parsed body counts as "no body": absent, empty, `null` or `{}` (what many clients send by habit). */
function isNoBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  return typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Installs the request rules that do not belong to one route. Call before routes are registered.
 * - Every query string, on every route but GraphQL's, is refused with 400 VALIDATION_FAILED naming the parameter
 *   when a value holds NUL or a lone surrogate (also as percent-escapes that are not UTF-8: badQueryEncoding) or is
 *   over-long (badQueryFields), before the route's schema runs.
 * - Bodies are JSON only: Fastify's built-in text/plain parser is removed, so any other media type answers
 *   415 UNSUPPORTED_MEDIA_TYPE (before, `text/plain` reached the routes as a string).
 * - An operation that takes no body (no `body` schema: revet, expedite, redeliver, deletes…) accepts none, an
 *   empty one, `null` or `{}`; any other body answers 400 BODY_NOT_ALLOWED (field `(body)`) instead of being
 *   silently ignored. GraphQL routes are left to Yoga.
 */
export function installInputRules(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  // A callback hook (no promise per request); a request without a query string has nothing to check.
  app.addHook('preValidation', (request, _reply, done) => {
    // Yoga parses its own query string (GET operations).
    const at = request.url.indexOf('?');
    if (at < 0 || request.url.startsWith('/graphql')) return done();
    const bad = [...badQueryEncoding(request.url.slice(at + 1)), ...badQueryFields(request.query)];
    done(bad.length > 0 ? new ValidationError(bad.slice(0, 20)) : undefined);
  });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url.startsWith('/graphql') || route.schema?.body !== undefined) return;
    if (!methods.some((m) => BODY_METHODS.has(m))) return;
    const guard = async (request: FastifyRequest) => {
      if (!isNoBody(request.body)) {
        throw new BadRequestError(
          'BODY_NOT_ALLOWED',
          `${request.method} ${route.url} takes no request body; send none (or {}).`,
          '(body)',
        );
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [...(Array.isArray(existing) ? existing : [existing]), guard] : [guard];
  });
}

/** Fastify's router-level errors (raised before any route, hook or error handler runs), mapped to stable codes. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; message: string; field?: string }> = {
  FST_ERR_BAD_URL: {
    status: 400,
    code: 'BAD_URL',
    message: 'The URL path is not valid percent-encoding (RFC 3986 2.1).',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 400,
    code: 'VALIDATION_FAILED',
    message: `A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`,
    field: 'params',
  },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'BAD_REQUEST', message: 'The request cannot be routed.' },
};

/**
 * Fastify's `frameworkErrors` option: answers router errors (bad percent-encoding, over-long parameter) in the one
 * error body with `x-request-id`, instead of Fastify's own body that echoes the URL and carries no request id.
 * Hooks do not run for these requests, so the header is set here.
 */
export function frameworkErrorHandler(
  err: Error & { code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const known = (err.code && FRAMEWORK_ERRORS[err.code]) || {
    status: 400,
    code: 'BAD_REQUEST',
    message: 'The request cannot be routed.',
  };
  const body: ErrorBody = {
    error: { code: known.code, message: known.message, ...(known.field ? { field: known.field } : {}) },
  };
  reply.header('x-request-id', request.id).status(known.status).send(body);
}

/**
 * Fastify's `clientErrorHandler` option: requests Node's HTTP parser refuses before Fastify sees them (headers
 * over 16 KiB, e.g. a huge URL: 431; a request timeout: 408; malformed HTTP: 400) answer in the one error body
 * with a fresh `x-request-id` (the request never got one), then the connection closes as Node does by default.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'REQUEST_TIMEOUT', 'The request was not received in time.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE', 'The request line and headers exceed 16 KiB.']
        : [400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ error: { code, message } } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
