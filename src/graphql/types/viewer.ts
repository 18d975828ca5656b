import { issueKeyForActor, revokeKey, SCOPES, type Scope } from '../../domain/accounts/account.service.js';
import { builder } from '../builder.js';

/**
 * API key scopes, from the domain's SCOPES: GraphQL names cannot hold `:`, so `events:read` is EVENTS_READ (the
 * value is the domain's scope string).
 */
export const ScopeEnum = builder.enumType('Scope', {
  description: `An API key scope (README "Authentication"): ${SCOPES.join(', ')}.`,
  values: Object.fromEntries(
    SCOPES.map((scope) => [scope.replace(':', '_').toUpperCase(), { value: scope, description: scope }]),
  ) as Record<string, { value: Scope }>,
});

const Viewer = builder.objectRef<{ accountId: string; scopes: Scope[] }>('Viewer').implement({
  description: 'The caller: the API key’s account and scopes.',
  fields: (t) => ({
    accountId: t.exposeString('accountId', { description: 'The account id (`customerId` of events).' }),
    scopes: t.field({ type: [ScopeEnum], description: 'Scopes of the API key in use.', resolve: (v) => v.scopes }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    description: 'The authenticated caller.',
    resolve: (_root, _args, ctx) => ({ accountId: ctx.actor.accountId, scopes: [...ctx.actor.scopes] }),
  }),
);

const IssuedApiKey = builder.objectRef<{ keyId: string; apiKey: string; scopes: Scope[] }>('IssuedApiKey').implement({
  description: 'A new API key. `apiKey` is shown only in this response; only its hash is stored.',
  fields: (t) => ({
    keyId: t.exposeString('keyId'),
    apiKey: t.exposeString('apiKey'),
    scopes: t.field({ type: [ScopeEnum], resolve: (k) => k.scopes }),
  }),
});

const IssueApiKeyInput = builder.inputType('IssueApiKeyInput', {
  description: 'A new key for this account: a name and a subset of the caller’s scopes.',
  fields: (t) => ({
    name: t.string({ required: true }),
    scopes: t.field({ type: [ScopeEnum], required: true }),
  }),
});

const RevokeApiKeyInput = builder.inputType('RevokeApiKeyInput', {
  description: 'The key to revoke.',
  fields: (t) => ({ keyId: t.string({ required: true }) }),
});

const IssueApiKeyPayload = builder
  .objectRef<{ keyId: string; apiKey: string; scopes: Scope[] }>('IssueApiKeyPayload')
  .implement({
    description: 'The key issued.',
    fields: (t) => ({ issuedApiKey: t.field({ type: IssuedApiKey, resolve: (p) => p }) }),
  });

const RevokeApiKeyPayload = builder.objectRef<{ revokedKeyId: string }>('RevokeApiKeyPayload').implement({
  description: 'The key revoked; requests with it answer 401 from now on.',
  fields: (t) => ({ revokedKeyId: t.exposeString('revokedKeyId') }),
});

builder.mutationField('issueApiKey', (t) =>
  t.field({
    type: IssueApiKeyPayload,
    errors: {},
    description: 'Issues another API key for this account with a subset of the caller’s scopes.',
    args: { input: t.arg({ type: IssueApiKeyInput, required: true }) },
    resolve: (_root, { input }, ctx) => issueKeyForActor(ctx.app.db, ctx.actor, input),
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.field({
    type: RevokeApiKeyPayload,
    errors: {},
    description: 'Revokes one of this account’s API keys; requests with it answer 401 from then on.',
    args: { input: t.arg({ type: RevokeApiKeyInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await revokeKey(ctx.app, ctx.actor, input.keyId);
      return { revokedKeyId: input.keyId };
    },
  }),
);
