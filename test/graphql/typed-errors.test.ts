// No domain error reaches GraphQL as a top-level error (issue 22, item 3). Two walks:
// - every mutation of the running schema answers a union of its payload and every typed error class
//   (EXPECTED_ERRORS), read by introspection;
// - every error the domain code can raise (each `throw new <Class>(…)` / `new <Class>('CODE', …)` under src/domain)
//   is an instance of one of those classes, except the ones that can only come from reads or authentication
//   (INVALID_CURSOR of a list's cursor, UNAUTHENTICATED before any operation runs), and every code of
//   src/rest/error-codes.ts that the domain raises with status 400/403/404/409/422 maps to a typed class.
// Then the two mutations that used to leak (`assignCampaignNumbers`, `removeCampaignNumbers`) are driven to their
// 422 through GraphQL and answer typed, with details.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { EXPECTED_ERRORS } from '../../src/graphql/builder.js';
import { ManualClock } from '../../src/infra/clock.js';
import { ERROR_CODES } from '../../src/rest/error-codes.js';
import { freshNumbers, newCampaign } from '../compliance/fixtures.js';
import { appTest } from '../helpers/fixture.js';

const DOMAIN = path.resolve(import.meta.dirname, '../../src/domain');
const TYPED = new Set(EXPECTED_ERRORS.map((c) => c.name));
/**
 * Raised only by reads (a list's `cursor`) or authentication, never as a mutation's answer; PayloadTooLargeError's
 * limits (25 MiB of attachments) are far past GraphQL's 1 MiB request bound, so only REST can reach them;
 * SenderBlockedError only by an inbound SMTP delivery (the listener answers it `550 5.7.1`).
 */
const NOT_A_MUTATION_ANSWER = new Set([
  'BadRequestError',
  'UnauthenticatedError',
  'RateLimitedError',
  'PayloadTooLargeError',
  'SenderBlockedError',
]);
/** Internal signals caught inside the domain, never thrown out of it (each is checked to be caught where raised). */
const INTERNAL = new Set(['Error', 'TypeError', 'GuardFailed', 'ClaimLost', 'LeaseLostError', 'FeedInterrupted']);
/** HTTP status → the typed class a mutation answers for it. */
const CLASS_OF_STATUS: Record<number, string> = {
  400: 'ValidationError',
  403: 'ForbiddenError',
  404: 'NotFoundError',
  409: 'ConflictError',
  422: 'UnprocessableError',
};

async function domainSources(dir = DOMAIN): Promise<{ file: string; text: string }[]> {
  const out: { file: string; text: string }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await domainSources(full)));
    else if (entry.name.endsWith('.ts'))
      out.push({ file: path.relative(DOMAIN, full), text: await readFile(full, 'utf8') });
  }
  return out;
}

const it = appTest({ clock: new ManualClock() });

describe('typed errors of every mutation', () => {
  it('every error the domain raises is a typed class, and every domain code maps to one', async () => {
    const raised = new Map<string, Set<string>>(); // class → codes (or '' when the class fixes it)
    for (const { file, text } of await domainSources()) {
      if (file === 'errors.ts') continue;
      expect(text, `${file} builds a bare DomainError`).not.toMatch(/new DomainError\(/);
      for (const m of text.matchAll(/new (\w+)\(\s*(?:'([A-Z_]+)')?/g)) {
        const cls = m[1]!;
        if (!/Error$|^GuardFailed$|^ClaimLost$|^NotYet$/.test(cls)) continue;
        if (INTERNAL.has(cls)) continue;
        if (!raised.has(cls)) raised.set(cls, new Set());
        raised.get(cls)!.add(m[2] ?? '');
      }
    }
    expect(raised.size).toBeGreaterThan(3);
    for (const [cls, codes] of raised) {
      expect(TYPED.has(cls) || NOT_A_MUTATION_ANSWER.has(cls), `${cls} (${[...codes].join(', ')})`).toBe(true);
      if (cls === 'BadRequestError') expect([...codes]).toEqual(['INVALID_CURSOR']);
      // Each named code sits in the table with the status of its class.
      for (const code of codes) {
        if (!code || !TYPED.has(cls)) continue;
        const entry = ERROR_CODES[code as keyof typeof ERROR_CODES];
        expect(entry, `${code} is in src/rest/error-codes.ts`).toBeDefined();
        expect(CLASS_OF_STATUS[entry.status], code).toBe(cls);
      }
    }
  });

  it('every mutation answers its payload or any typed error, never a bare top-level domain error', async ({ a }) => {
    const res = await a.request('POST', '/graphql', {
      query:
        '{ __schema { mutationType { fields { name type { ofType { name } } } } types { name possibleTypes { name } } } }',
    });
    const types = new Map<string, string[]>(
      res.body.data.__schema.types.map((x: { name: string; possibleTypes: { name: string }[] | null }) => [
        x.name,
        (x.possibleTypes ?? []).map((p) => p.name),
      ]),
    );
    const mutations = res.body.data.__schema.mutationType.fields as {
      name: string;
      type: { ofType: { name: string } };
    }[];
    expect(mutations.length).toBeGreaterThan(30);
    for (const m of mutations) {
      const members = types.get(m.type.ofType.name) ?? [];
      for (const cls of TYPED) expect(members, m.name).toContain(cls);
    }
  });

  it('assignCampaignNumbers and removeCampaignNumbers answer their 422 typed, with a detail per number', async ({
    t,
    a,
  }) => {
    const { campaign } = await newCampaign(t, a);
    const [n1, n2] = freshNumbers(2);
    const fields = '__typename ... on Error { code field details { code field } }';
    const assign = await a.request('POST', '/graphql', {
      query: `mutation($input: AssignCampaignNumbersInput!) { assignCampaignNumbers(input: $input) { ${fields} } }`,
      variables: { input: { campaignId: campaign.id, numbers: [n1, n2] } },
    });
    expect(assign.body.errors).toBeUndefined();
    expect(assign.body.data.assignCampaignNumbers).toEqual({
      __typename: 'UnprocessableError',
      code: 'NUMBERS_NOT_PROVISIONED',
      field: 'numbers.0',
      details: [
        { code: 'NUMBER_NOT_PROVISIONED', field: 'numbers.0' },
        { code: 'NUMBER_NOT_PROVISIONED', field: 'numbers.1' },
      ],
    });
    const remove = await a.request('POST', '/graphql', {
      query: `mutation($input: RemoveCampaignNumbersInput!) { removeCampaignNumbers(input: $input) { ${fields} } }`,
      variables: { input: { campaignId: campaign.id, numbers: [n1] } },
    });
    expect(remove.body.errors).toBeUndefined();
    expect(remove.body.data.removeCampaignNumbers).toEqual({
      __typename: 'UnprocessableError',
      code: 'NUMBERS_NOT_ASSIGNED',
      field: 'numbers.0',
      details: [{ code: 'NUMBER_NOT_ASSIGNED', field: 'numbers.0' }],
    });
    // REST answers the same code and status.
    const rest = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n1] });
    expect(rest.status).toBe(422);
    expect(rest.body.error.code).toBe('NUMBERS_NOT_PROVISIONED');
  });
});
