import { issueKeyForActor, revokeKey, SCOPES } from '../../domain/accounts/account.service.js';
import { builder } from '../builder.js';

const Viewer = builder.objectRef<{ accountId: string; scopes: string[] }>('Viewer').implement({
  description: 'The caller: the API key’s account and scopes.',
  fields: (t) => ({
    accountId: t.exposeString('accountId', { description: 'The account id (`customerId` of events).' }),
    scopes: t.exposeStringList('scopes', { description: 'Scopes of the API key in use.' }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    description: 'The authenticated caller.',
    resolve: (_root, _args, ctx) => ({ accountId: ctx.actor.accountId, scopes: [...ctx.actor.scopes] }),
  }),
);

const IssuedApiKey = builder.objectRef<{ keyId: string; apiKey: string; scopes: string[] }>('IssuedApiKey').implement({
  description: 'A new API key. `apiKey` is shown only in this response; only its hash is stored.',
  fields: (t) => ({
    keyId: t.exposeString('keyId'),
    apiKey: t.exposeString('apiKey'),
    scopes: t.exposeStringList('scopes'),
  }),
});

builder.mutationField('issueApiKey', (t) =>
  t.field({
    type: IssuedApiKey,
    description: 'Issues another API key for this account with a subset of the caller’s scopes.',
    args: {
      name: t.arg.string({ required: true }),
      scopes: t.arg.stringList({ required: true, description: `Any of: ${SCOPES.join(', ')}.` }),
    },
    resolve: (_root, args, ctx) => issueKeyForActor(ctx.app.db, ctx.actor, args),
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.boolean({
    description: 'Revokes one of this account’s API keys; requests with it answer 401 from then on.',
    args: { keyId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await revokeKey(ctx.app, ctx.actor, args.keyId);
      return true;
    },
  }),
);
