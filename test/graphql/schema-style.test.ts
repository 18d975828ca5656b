// One schema style (issue 11), read from the running service by introspection: every mutation is
// `verbNoun(input: VerbNounInput!): VerbNounResult!`, a union of its payload and the typed errors; every object type
// with a service id is a Node.
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const INTROSPECT = `{
  __schema {
    mutationType { fields { name args { name type { kind name ofType { kind name } } } type { kind name ofType { kind name } } } }
    types { name kind possibleTypes { name } interfaces { name } fields { name } }
  }
}`;

interface Ref {
  kind: string;
  name: string | null;
  ofType?: Ref | null;
}

const upperFirst = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}`;

const it = appTest();

describe('GraphQL schema style', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('every mutation takes one required input and answers its payload or a typed error', async () => {
    const res = await a.request('POST', '/graphql', { query: INTROSPECT });
    expect(res.body.errors).toBeUndefined();
    const schema = res.body.data.__schema;
    const types = new Map<string, { kind: string; possibleTypes: { name: string }[] | null }>(
      schema.types.map((x: { name: string }) => [x.name, x]),
    );
    const mutations = schema.mutationType.fields as { name: string; args: { name: string; type: Ref }[]; type: Ref }[];
    expect(mutations.length).toBeGreaterThanOrEqual(30);
    for (const m of mutations) {
      const name = upperFirst(m.name);
      // createStreamToken has nothing to choose, and GraphQL has no empty input type (docs/graphql.md).
      if (m.name !== 'createStreamToken') {
        expect(
          m.args.map((x) => x.name),
          m.name,
        ).toEqual(['input']);
        expect(m.args[0]!.type, m.name).toMatchObject({ kind: 'NON_NULL', ofType: { name: `${name}Input` } });
      }
      expect(m.type, m.name).toMatchObject({ kind: 'NON_NULL', ofType: { kind: 'UNION', name: `${name}Result` } });
      const members = types
        .get(`${name}Result`)!
        .possibleTypes!.map((p) => p.name)
        .sort();
      expect(members, m.name).toEqual(
        [
          `${name}Payload`,
          'ConflictError',
          'ForbiddenError',
          'NotFoundError',
          'UnprocessableError',
          'ValidationError',
        ].sort(),
      );
    }
  });

  it('the types with a service id are Nodes; every connection is a <Type>Connection of a type', async () => {
    const res = await a.request('POST', '/graphql', { query: INTROSPECT });
    const schema = res.body.data.__schema as {
      types: { name: string; kind: string; interfaces: { name: string }[] | null; fields: { name: string }[] | null }[];
    };
    const byName = new Map(schema.types.map((x) => [x.name, x]));
    const nodes = [
      'Brand',
      'Campaign',
      'Agent',
      'EmailIdentity',
      'EmailThread',
      'RoleMessage',
      'Webhook',
      'WebhookDelivery',
    ];
    for (const name of nodes) {
      expect(
        byName.get(name)?.interfaces?.map((i) => i.name),
        name,
      ).toContain('Node');
    }
    const connections = schema.types.filter((x) => x.kind === 'OBJECT' && x.name.endsWith('Connection'));
    for (const c of connections) {
      const node = c.name.slice(0, -'Connection'.length);
      expect(byName.has(node), `${c.name} names a type`).toBe(true);
      expect(
        c.fields?.map((f) => f.name),
        c.name,
      ).toEqual(expect.arrayContaining(['edges', 'pageInfo']));
    }
    expect(connections.map((c) => c.name).sort()).toEqual(
      [
        'AgentConnection',
        'BrandConnection',
        'CampaignConnection',
        'ContactConnection',
        'EmailIdentityConnection',
        'EmailThreadConnection',
        'PhoneNumberConnection',
        'RoleMessageConnection',
        'WebhookConnection',
        'WebhookDeliveryConnection',
      ].sort(),
    );
  });
});
