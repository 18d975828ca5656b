import { describe, expect } from 'vitest';
import { accountClient } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { rawSse } from '../helpers/sse.js';

const it = appTest({ env: { EVENT_STREAM_HEARTBEAT_MS: '100' } });

describe('an open stream re-checks its API key', () => {
  it('ends the stream of a revoked key within a heartbeat, and the reconnect answers 401', async ({ t }) => {
    const admin = await t.newAccount();
    const issued = await admin.request('POST', '/graphql', {
      query:
        'mutation { issueApiKey(input: { name: "dash", scopes: [EVENTS_READ] }) { ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey } } } }',
    });
    const { keyId, apiKey } = issued.body.data.issueApiKey.issuedApiKey as { keyId: string; apiKey: string };
    const stream = await rawSse(`${t.url}/api/events?token=${apiKey}`);
    expect(stream.status).toBe(200);
    await stream.waitFor(/: heartbeat/);

    const revoked = await admin.request('POST', '/graphql', {
      query: `mutation { revokeApiKey(input: { keyId: "${keyId}" }) { ... on RevokeApiKeyPayload { revokedKeyId } } }`,
    });
    expect(revoked.body.data.revokeApiKey.revokedKeyId).toBe(keyId);
    await stream.ended;

    const again = await fetch(`${t.url}/api/events?token=${apiKey}`);
    expect(again.status).toBe(401);
    // A key that stays valid keeps its stream.
    const other = accountClient(t.url, admin.accountId, admin.apiKey);
    const kept = await rawSse(`${t.url}/api/events?token=${other.apiKey}`);
    await kept.waitFor(/: heartbeat[\s\S]*: heartbeat[\s\S]*: heartbeat/);
    kept.close();
  });
});
