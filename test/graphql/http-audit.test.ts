// GraphQL over HTTP conformance (issue 22, item 4): graphql-http's own server audits run against /graphql with an
// API key. Every MUST and every SHOULD passes: with `Accept: application/json` a request that fails parsing,
// validation or variable coercion answers 200 (the legacy media type's rule), while
// `application/graphql-response+json` answers 4xx.
import { serverAudits } from 'graphql-http';
import { describe, expect } from 'vitest';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe('GraphQL over HTTP audit (graphql-http serverAudits)', () => {
  let a: TestAccount;
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(async ({ t: app }) => {
    t = app;
    a = await t.newAccount();
  });

  const audits = serverAudits({
    url: () => `${t.url}/graphql`,
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${a.apiKey}`);
      return fetch(input, { ...init, headers });
    },
  });

  for (const audit of audits) {
    it(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      expect(result.status === 'ok' ? 'ok' : `${result.status}: ${result.reason}`).toBe('ok');
    });
  }
});
