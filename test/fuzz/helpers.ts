import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.js';

/**
 * Shared pieces of the bad-input fuzz tests (issue 13): hostile strings, the account fingerprint that proves a
 * refused request changed nothing, and the seeds (a fixed one, and a random one printed so a failure replays).
 */

/** Fixed seed of the first run; the second run's seed is random and printed (FUZZ_SEED=<n> replays it). */
export const FIXED_SEED = 13;
export const RANDOM_SEED = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
/** Requests per seed (FUZZ_RUNS overrides): two seeds of this many keep each surface near a minute on a busy machine. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

/** Strings that have broken services before: NUL, lone surrogates, huge, numeric edge cases, encodings, injections. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfff',
    '\ud83d\udca9',
    '%00',
    '%ZZ',
    '../../etc/passwd',
    "' OR 1=1 --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, literal on purpose
    '${jndi:ldap://x}',
    '<script>alert(1)</script>',
    '0x10',
    '1e309',
    '-1',
    '0',
    '9223372036854775808',
    '99999999999999999999999',
    'NaN',
    'true',
    'null',
    '{}',
    '[]',
    '__proto__',
    'constructor',
    '+14155550100',
    'https://example.com/hook',
    'http://169.254.169.254/latest',
    'sms.*',
    'REVIEW',
    'a'.repeat(101),
    'b'.repeat(5000),
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
);

/** Any JSON-ish value, with hostile strings, for bodies and GraphQL arguments. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.constantFrom(2 ** 53, -(2 ** 63), 1e308, -0, 0, 1, 100, 1001),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Per-account models and fields that legitimately change on any authenticated request. */
const MODELS = [
  'brand',
  'vetting',
  'campaign',
  'phoneNumber',
  'registryTask',
  'agent',
  'knowledgeDocument',
  'emailIdentity',
  'emailThread',
  'emailMessage',
  'agentJob',
  'event',
  'webhook',
  'webhookDelivery',
  'apiKey',
] as const;

/**
 * A digest of every row of the account's tables (all columns but `lastUsedAt`), so "no row changed" is checked
 * byte for byte rather than by counts. Idempotency records are left out: storing an answer is their purpose.
 */
export async function accountFingerprint(t: TestApp, accountId: string): Promise<string> {
  const hash = createHash('sha256');
  const db = t.app.ctx.db as unknown as Record<string, { findMany(args: unknown): Promise<unknown[]> }>;
  for (const model of MODELS) {
    const orderBy = model === 'phoneNumber' ? { number: 'asc' } : { id: 'asc' };
    const rows = await db[model]!.findMany({ where: { accountId }, orderBy });
    hash.update(model);
    hash.update(
      JSON.stringify(rows, (k, v) => (k === 'lastUsedAt' ? undefined : typeof v === 'bigint' ? v.toString() : v)),
    );
  }
  return hash.digest('hex');
}
