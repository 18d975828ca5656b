import { z } from 'zod';
import { type ErrorDetail, ValidationError } from './errors.js';

const plural = (n: number | bigint, one: string, many = `${one}s`) => `${n} ${Number(n) === 1 ? one : many}`;

/** What a value of a zod type is called in a message ("must be a string"). */
const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  date: 'a date',
  null: 'null',
  record: 'an object',
  map: 'an object',
  set: 'an array',
  literal: 'a fixed value',
  nan: 'NaN',
};

/** Our wording of a string format a value failed ("must be an email address"). */
const FORMAT_WORDS: Record<string, string> = {
  email: 'must be an email address',
  url: 'must be an absolute URL (https://…)',
  uuid: 'must be a UUID',
  guid: 'must be a UUID',
  datetime: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z',
  date: 'must be a date, YYYY-MM-DD',
  time: 'must be a time, HH:MM[:SS]',
  duration: 'must be an ISO 8601 duration',
  ipv4: 'must be an IPv4 address',
  ipv6: 'must be an IPv6 address',
  e164: 'must be a phone number in E.164 form, e.g. +14155550100',
  base64: 'must be base64',
  base64url: 'must be base64url',
  regex: 'has an invalid format',
};

/**
 * The message of a zod issue in this service's own words (spec 9 error body `details[].message`): short, about the
 * field, without zod's "Invalid input: expected string, received number" wording, which is an implementation
 * detail. Messages a schema states itself (`.regex(re, 'must be …')`, `refine(…, { message })`) take precedence:
 * zod consults this map only for issues without one. Installed with `z.config({ customError })` below.
 * @returns the message, never undefined (every issue code has a wording).
 */
export function messageOf(issue: z.core.$ZodRawIssue): string {
  const i = issue as z.core.$ZodRawIssue & Record<string, any>;
  switch (issue.code) {
    case 'invalid_type':
      if (i.input === undefined) return 'is required';
      return `must be ${TYPE_NAMES[String(i.expected)] ?? `of type ${String(i.expected)}`}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = small ? i.minimum : i.maximum;
      const inclusive = i.inclusive !== false;
      const word = i.exact ? 'exactly' : small ? 'at least' : 'at most';
      if (i.origin === 'string') {
        if (small && Number(bound) === 1 && !i.exact) return 'must not be empty';
        return `must be ${word} ${plural(bound, 'character')} long`;
      }
      if (i.origin === 'array' || i.origin === 'set') {
        if (small && Number(bound) === 1 && !i.exact) return 'must have at least one item';
        return `must have ${word} ${plural(bound, 'item')}`;
      }
      if (i.origin === 'date')
        return `must be ${small ? 'on or after' : 'on or before'} ${new Date(Number(bound)).toISOString()}`;
      if (!inclusive) return `must be ${small ? 'greater' : 'less'} than ${bound}`;
      return `must be ${word} ${bound}`;
    }
    case 'invalid_format':
      if (i.format === 'starts_with') return `must start with "${i.prefix}"`;
      if (i.format === 'ends_with') return `must end with "${i.suffix}"`;
      if (i.format === 'includes') return `must contain "${i.includes}"`;
      return FORMAT_WORDS[String(i.format)] ?? `must be a valid ${String(i.format)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${i.divisor}`;
    case 'invalid_value': {
      const values = (i.values as unknown[]).map((v) => JSON.stringify(v));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(', ')}`;
    }
    case 'unrecognized_keys':
      return `unknown ${(i.keys as string[]).length === 1 ? 'field' : 'fields'} ${(i.keys as string[]).map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_union':
      return 'matches none of the accepted forms';
    case 'invalid_key':
      return 'has an invalid key';
    case 'invalid_element':
      return 'has an invalid item';
    default:
      return 'is invalid';
  }
}

// Every zod schema of the service (domain inputs, REST parameters, configuration) words its issues with messageOf.
z.config({ customError: messageOf });

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function codeOf(issue: z.core.$ZodIssue, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return valueAt(input, issue.path) === undefined ? 'REQUIRED' : 'INVALID_TYPE';
    case 'too_small':
      return issue.origin === 'array' ? 'TOO_FEW' : issue.origin === 'string' ? 'TOO_SHORT' : 'TOO_SMALL';
    case 'too_big':
      return issue.origin === 'array' ? 'TOO_MANY' : issue.origin === 'string' ? 'TOO_LONG' : 'TOO_BIG';
    case 'invalid_format':
      return 'INVALID_FORMAT';
    case 'invalid_value':
      return valueAt(input, issue.path) === undefined ? 'REQUIRED' : 'INVALID_ENUM_VALUE';
    case 'unrecognized_keys':
      return 'UNKNOWN_FIELD';
    case 'custom':
      return typeof issue.params?.code === 'string' ? issue.params.code : 'INVALID';
    default:
      return 'INVALID';
  }
}

/**
 * Turns every issue of a zod error into {@link ErrorDetail}s (field = dotted path; `prefix` is prepended, e.g.
 * `query`), so a client sees all violations at once.
 */
export function detailsFromZod(error: z.ZodError, input: unknown, prefix?: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const field = [...issue.path, key].map(String).join('.');
        details.push({ code: 'UNKNOWN_FIELD', field, message: `unknown field "${key}"` });
      }
      continue;
    }
    const path = issue.path.map(String).join('.');
    const field = prefix ? (path ? `${prefix}.${path}` : prefix) : path || '(body)';
    const code = codeOf(issue, input);
    details.push({ code, field, message: code === 'REQUIRED' ? 'is required' : issue.message });
  }
  return details;
}

/**
 * Parses `input` with `schema`, the one schema per input shared by REST and GraphQL.
 * @returns the parsed (typed, defaulted, transformed) value.
 * @throws ValidationError listing every violation.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(detailsFromZod(result.error, input));
  return result.data;
}

/**
 * A resource id in a URL path or an argument (brand, campaign, webhook, delivery, identity, thread, agent,
 * document ids): 1 to 100 characters from `A–Z a–z 0–9 _ -`. Every id this service issues is a UUID (36
 * characters), so this refuses nothing real; it keeps NUL bytes, percent-decoded controls and megabyte ids away
 * from the database (issue 13: PostgreSQL error 22021 answered 500). Refusal: 400 VALIDATION_FAILED, detail
 * code INVALID_FORMAT on the field (`params.id`).
 */
export const resourceId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' });

/** Path parameters `{id}`: the one id schema every REST route with an `{id}` uses. */
export const idParams = z.object({ id: resourceId });

/**
 * A strictly parsed integer query parameter (`?limit=`): a JSON number (GraphQL, in-process callers) or a string
 * of 1 to 9 decimal digits (`0x10`, `1e3`, ` 5`, `+5` and `5.0` are refused, not read as 16, 1000 or 5), then
 * range-checked. Errors: INVALID_FORMAT for a non-decimal string, TOO_SMALL / TOO_BIG out of range.
 * @param min smallest accepted value; @param max largest accepted value.
 */
export function decimalInt(min: number, max: number) {
  return z
    .union([
      z.number(),
      z
        .string()
        .regex(/^\d{1,9}$/, { message: 'must be a decimal integer' })
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));
}

/** Largest PostgreSQL `bigint` (event ids are bigint): 2^63 - 1. */
export const MAX_BIGINT = 9_223_372_036_854_775_807n;

/**
 * A decimal bigint cursor (event ids: `after`, `Last-Event-ID`): 1 to 19 digits and at most 2^63 - 1, so
 * `after=9223372036854775808` is a 400 on the field, not a PostgreSQL "bigint out of range" 500.
 */
export const decimalBigintString = z
  .string()
  .regex(/^\d{1,19}$/, 'must be an event id (decimal digits)')
  // Zod runs every check even after the regex failed: only compare what is digits.
  .refine((v) => !/^\d{1,19}$/.test(v) || BigInt(v) <= MAX_BIGINT, {
    message: 'is larger than any event id (2^63 - 1)',
  });

const LONE_SURROGATE = /[\uD800-\uDFFF]/u; // with the u flag, only unpaired surrogates match
const LONE_SURROGATE_ALL = /[\uD800-\uDFFF]/gu;

/** Why `s` cannot be stored faithfully (U+0000 or a lone surrogate), or undefined when it can. */
function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain U+0000 (NUL)';
  return LONE_SURROGATE.test(s)
    ? 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)'
    : undefined;
}

/**
 * Dotted paths of every string (or key) in a parsed JSON body that PostgreSQL cannot store faithfully, with why,
 * at most 20: U+0000 (text and jsonb cannot hold it: a 500 before) and lone UTF-16 surrogates (`"\ud800"`, valid
 * JSON escapes that are not Unicode text: stored as U+FFFD before, silently altering the data). Detail code
 * INVALID_CHARACTER. Keys are checked too and reported with the offending character escaped.
 */
export function badTextFields(value: unknown, path: string[] = [], out: ErrorDetail[] = []): ErrorDetail[] {
  // One path stack pushed and popped along the walk: no array per level, no closure per call (every request body).
  walkText(value, [...path], out);
  return out;
}

function walkText(value: unknown, path: string[], out: ErrorDetail[]): void {
  if (out.length >= 20) return;
  if (typeof value === 'string') {
    const message = textProblem(value);
    if (message) out.push({ code: 'INVALID_CHARACTER', field: path.join('.') || '(body)', message });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(String(i));
      walkText(value[i], path, out);
      path.pop();
    }
  } else if (value && typeof value === 'object') {
    for (const k of Object.keys(value)) {
      const message = textProblem(k);
      if (message) {
        const shown = k.replaceAll('\u0000', '\\u0000').replace(LONE_SURROGATE_ALL, '\uFFFD');
        out.push({ code: 'INVALID_CHARACTER', field: [...path, shown].join('.'), message: `key ${message}` });
      } else {
        path.push(k);
        walkText((value as Record<string, unknown>)[k], path, out);
        path.pop();
      }
    }
  }
}

/**
 * Whether the values JSON.parse makes of `text` may hold what {@link badTextFields} refuses. They cannot when the
 * text has no `\u` escape, no U+0000 and no lone surrogate: JSON spells U+0000 and a lone surrogate inside a string
 * only as a `\u` escape (a raw control character is a syntax error), and every other character of a value is the
 * text's own. The JSON body parser skips the walk of such bodies (most of them) after one scan of the text.
 */
export function jsonTextMayHoldBadText(text: string): boolean {
  return text.includes('\\u') || text.includes('\u0000') || LONE_SURROGATE.test(text);
}
