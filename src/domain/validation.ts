import type { z } from 'zod';
import { type ErrorDetail, ValidationError } from './errors.js';

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
