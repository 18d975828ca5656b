// GraphQL inputs default like REST (issue 22, item 5): for every mutation that has a REST twin (the REST operation
// with the same operationId in /openapi.json), the input fields GraphQL requires are exactly the body fields REST
// requires, plus the REST path parameters (which GraphQL carries in the input, e.g. `id`).
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}

const it = appTest();

describe('GraphQL inputs require what REST requires', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('each mutation’s required input fields equal its REST route’s required body fields and path parameters', async () => {
    const schema = await a.request('POST', '/graphql', {
      query: `{ __schema {
        mutationType { fields { name args { name type { kind name ofType { kind name } } } } }
        types { name inputFields { name defaultValue type { kind name ofType { kind name } } } }
      } }`,
    });
    const types = new Map<string, { name: string; defaultValue: string | null; type: TypeRef }[]>(
      schema.body.data.__schema.types.map((x: { name: string; inputFields: unknown }) => [x.name, x.inputFields ?? []]),
    );
    const openapi = (await a.request('GET', '/openapi.json')).body;
    const operations = new Map<string, any>();
    for (const item of Object.values(openapi.paths) as Record<string, any>[]) {
      for (const op of Object.values(item)) if (op?.operationId) operations.set(op.operationId, op);
    }
    // Follows `#/components/…` references (request bodies and schemas).
    const resolveRef = (s: any): any =>
      s?.$ref
        ? resolveRef(
            s.$ref
              .slice(2)
              .split('/')
              .reduce((node: any, key: string) => node?.[key], openapi),
          )
        : s;

    const compared: string[] = [];
    const differences: string[] = [];
    for (const m of schema.body.data.__schema.mutationType.fields as { name: string; args: { type: TypeRef }[] }[]) {
      const op = operations.get(m.name);
      if (!op) continue;
      const inputType = m.args[0]?.type.ofType?.name;
      const graphqlRequired = (types.get(inputType ?? '') ?? [])
        .filter((f) => f.type.kind === 'NON_NULL' && f.defaultValue === null)
        .map((f) => f.name)
        .sort();
      const body = resolveRef(resolveRef(op.requestBody)?.content?.['application/json']?.schema);
      const bodyRequired: string[] = body?.required ?? [];
      // GraphQL names a path parameter after its object (`id` of /api/agents/{id} is `agentId` in
      // addKnowledgeDocument), so path parameters are compared by count: the required fields beyond the body's.
      const pathParams = (op.parameters ?? []).filter((p: any) => p.in === 'path').length;
      const beyondBody = graphqlRequired.filter((f) => !bodyRequired.includes(f));
      const missing = bodyRequired.filter((f) => !graphqlRequired.includes(f));
      compared.push(m.name);
      if (missing.length > 0 || beyondBody.length !== pathParams) {
        differences.push(
          `${m.name}: GraphQL ${graphqlRequired.join(',')} / REST body ${bodyRequired.join(',')} + ${pathParams} path`,
        );
      }
    }
    expect(compared).toContain('createAgent');
    expect(compared.length).toBeGreaterThan(15);
    expect(differences).toEqual([]);
  });

  it('createAgent needs only a name, as POST /api/agents', async () => {
    const res = await a.request('POST', '/graphql', {
      query:
        'mutation { createAgent(input: {name: "Minimal"}) { __typename ... on CreateAgentPayload { agent { id } } } }',
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createAgent.__typename).toBe('CreateAgentPayload');
    const agent = await a.request('GET', `/api/agents/${res.body.data.createAgent.agent.id}`);
    expect(agent.body).toMatchObject({ name: 'Minimal', systemPrompt: '', contextSources: [] });
  });
});
