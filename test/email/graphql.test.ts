import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/gql.js';
import { startApp, type TestApp } from '../helpers/app.js';

const CreateAgent = graphql(`
  mutation EmailCreateAgent($input: CreateAgentInput!) {
    createAgent(input: $input) { id name textModel contextSources }
  }
`);
const AddDoc = graphql(`
  mutation EmailAddDoc($agentId: ID!, $input: AddKnowledgeDocumentInput!) {
    addKnowledgeDocument(agentId: $agentId, input: $input) { id agentId title }
  }
`);
const DeleteDoc = graphql(`
  mutation EmailDeleteDoc($agentId: ID!, $documentId: ID!) {
    deleteKnowledgeDocument(agentId: $agentId, documentId: $documentId)
  }
`);
const UpdateAgent = graphql(`
  mutation EmailUpdateAgent($id: ID!, $input: UpdateAgentInput!) {
    updateAgent(id: $id, input: $input) { id name knowledgeDocuments { title } }
  }
`);
const DeleteAgent = graphql(`
  mutation EmailDeleteAgent($id: ID!) { deleteAgent(id: $id) }
`);
const CreateIdentity = graphql(`
  mutation EmailCreateIdentity($input: CreateIdentityInput!) {
    createIdentity(input: $input) {
      id address localPart domain displayName agentId status smtpHost smtpPort smtpUser smtpPass createdAt
      agent { id name }
    }
  }
`);
const UpdateIdentity = graphql(`
  mutation EmailUpdateIdentity($id: ID!, $input: UpdateIdentityInput!) {
    updateIdentity(id: $id, input: $input) { id displayName agentId }
  }
`);
const DeleteIdentity = graphql(`
  mutation EmailDeleteIdentity($id: ID!) { deleteIdentity(id: $id) { id status } }
`);
const Send = graphql(`
  mutation EmailSend($identityId: ID!, $input: SendEmailInput!) {
    sendEmail(identityId: $identityId, input: $input) { messageId threadId }
  }
`);
const Reply = graphql(`
  mutation EmailReply($identityId: ID!, $input: ReplyToThreadInput!) {
    replyToThread(identityId: $identityId, input: $input) { messageId threadId }
  }
`);
const Inbox = graphql(`
  query EmailInbox($id: ID!, $first: Int, $after: String) {
    emailIdentity(id: $id) {
      address
      threads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        edges { node {
          threadId subject participants messageCount lastMessageAt
          messages { messageId from to subject body sentAt direction status inReplyTo references agentAnswer { status } }
        } }
      }
    }
  }
`);
const ThreadPage = graphql(`
  query EmailThreadPage($id: ID!, $first: Int, $after: String) {
    emailIdentity(id: $id) {
      threads(first: $first, after: $after) { pageInfo { hasNextPage endCursor } edges { node { threadId } } }
    }
  }
`);
const Lists = graphql(`
  query EmailLists {
    emailIdentities(first: 10) { edges { node { id address } } }
    agents(first: 10) { edges { node { id name } } }
  }
`);
const ThreadById = graphql(`
  query EmailThreadById($threadId: ID!) { emailThread(threadId: $threadId) { threadId messageCount } }
`);

describe('email over GraphQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('creates agents and identities, sends and replies, and reads threads as a Relay connection', async () => {
    const a = await t.newAccount();
    const agent = await a.gql(CreateAgent, {
      input: { name: 'Desk', systemPrompt: 'Help.', textModel: 'm', contextSources: ['knowledge'] },
    });
    expect(agent.errors).toBeUndefined();
    const agentId = agent.data!.createAgent.id;
    expect(
      (await a.gql(AddDoc, { agentId, input: { title: 'Hours', content: '9-5' } })).data?.addKnowledgeDocument,
    ).toMatchObject({
      agentId,
      title: 'Hours',
    });
    expect((await a.gql(UpdateAgent, { id: agentId, input: { name: 'Front desk' } })).data?.updateAgent).toEqual({
      id: agentId,
      name: 'Front desk',
      knowledgeDocuments: [{ title: 'Hours' }],
    });

    const local = `gql${Date.now().toString(36)}`;
    const created = await a.gql(CreateIdentity, { input: { localPart: local, agentId } });
    expect(created.errors).toBeUndefined();
    expect(created.data!.createIdentity).toMatchObject({
      address: `${local}@agents.switchboard.local`,
      status: 'active',
      smtpPort: 465,
      smtpUser: `${local}@agents.switchboard.local`,
      smtpPass: null,
      agent: { id: agentId, name: 'Front desk' },
    });
    const identityId = created.data!.createIdentity.id;
    expect(
      (await a.gql(UpdateIdentity, { id: identityId, input: { displayName: 'Desk' } })).data?.updateIdentity,
    ).toEqual({
      id: identityId,
      displayName: 'Desk',
      agentId,
    });

    const threadIds: string[] = [];
    for (const subject of ['One', 'Two', 'Three']) {
      const sent = await a.gql(Send, { identityId, input: { to: 'x@example.com', subject, body: 'b' } });
      expect(sent.errors).toBeUndefined();
      threadIds.push(sent.data!.sendEmail.threadId);
    }
    const replied = await a.gql(Reply, { identityId, input: { threadId: threadIds[0]!, body: 'again' } });
    expect(replied.data!.replyToThread.threadId).toBe(threadIds[0]);

    const page1 = await a.gql(Inbox, { id: identityId, first: 2 });
    expect(page1.errors).toBeUndefined();
    const conn = page1.data!.emailIdentity.threads;
    expect(conn.edges.map((e) => e.node.threadId)).toEqual([threadIds[0], threadIds[2]]);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    expect(conn.edges[0]!.node).toMatchObject({ subject: 'One', messageCount: 2 });
    expect(conn.edges[0]!.node.messages.map((m) => m.subject)).toEqual(['One', 'Re: One']);
    expect(conn.edges[0]!.node.messages[1]).toMatchObject({
      messageId: replied.data!.replyToThread.messageId,
      direction: 'outbound',
      status: 'undelivered',
      agentAnswer: null,
    });
    const page2 = await a.gql(Inbox, { id: identityId, first: 2, after: conn.pageInfo.endCursor });
    expect(page2.data!.emailIdentity.threads.edges.map((e) => e.node.threadId)).toEqual([threadIds[1]]);
    expect(page2.data!.emailIdentity.threads.pageInfo.hasNextPage).toBe(false);

    const lists = await a.gql(Lists);
    expect(lists.data!.emailIdentities.edges.map((e) => e.node.id)).toEqual([identityId]);
    expect(lists.data!.agents.edges.map((e) => e.node.id)).toEqual([agentId]);
    expect((await a.gql(ThreadById, { threadId: threadIds[1]! })).data?.emailThread.messageCount).toBe(1);

    expect((await a.gql(DeleteIdentity, { id: identityId })).data?.deleteIdentity).toEqual({
      id: identityId,
      status: 'deprovisioning',
    });
    expect((await a.gql(DeleteAgent, { id: agentId })).data?.deleteAgent).toBe(agentId);
  });

  it('pages threads like REST: activity during paging neither repeats nor reorders a thread on page 2', async () => {
    const a = await t.newAccount();
    const created = await a.gql(CreateIdentity, { input: { localPart: `pg${Date.now().toString(36)}` } });
    const identityId = created.data!.createIdentity.id;
    const ids: string[] = [];
    for (const subject of ['T0', 'T1', 'T2']) {
      const sent = await a.gql(Send, { identityId, input: { to: 'x@example.com', subject, body: 'b' } });
      ids.push(sent.data!.sendEmail.threadId);
    }
    const gql1 = (await a.gql(ThreadPage, { id: identityId, first: 2 })).data!.emailIdentity.threads;
    const rest1 = (await a.request('GET', `/api/email/identities/${identityId}/threads?limit=2`)).body;
    expect(gql1.edges.map((e) => e.node.threadId)).toEqual([ids[2], ids[1]]);
    expect(rest1.threads.map((th: { threadId: string }) => th.threadId)).toEqual([ids[2], ids[1]]);
    expect(gql1.pageInfo.hasNextPage).toBe(true);

    // The last thread of page 1 gets a reply and moves to the front.
    await a.gql(Reply, { identityId, input: { threadId: ids[1]!, body: 'bump' } });
    const gql2 = (await a.gql(ThreadPage, { id: identityId, first: 2, after: gql1.pageInfo.endCursor })).data!
      .emailIdentity.threads;
    const rest2 = (
      await a.request('GET', `/api/email/identities/${identityId}/threads?limit=2&cursor=${rest1.nextCursor}`)
    ).body;
    expect(gql2.edges.map((e) => e.node.threadId)).toEqual([ids[0]]);
    expect(rest2.threads.map((th: { threadId: string }) => th.threadId)).toEqual([ids[0]]);
    expect(gql2.pageInfo.hasNextPage).toBe(false);
    expect(rest2.nextCursor).toBe('');
  });

  it('deletes a knowledge document like REST: gone from the agent, NOT_FOUND again and for another account', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const agentId = (
      await a.gql(CreateAgent, { input: { name: 'Docs', systemPrompt: '', textModel: 'm', contextSources: [] } })
    ).data!.createAgent.id;
    const keep = (await a.gql(AddDoc, { agentId, input: { title: 'Keep', content: 'k' } })).data!.addKnowledgeDocument;
    const drop = (await a.gql(AddDoc, { agentId, input: { title: 'Drop', content: 'd' } })).data!.addKnowledgeDocument;

    const byB = await b.gql(DeleteDoc, { agentId, documentId: drop.id });
    expect(byB.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    const del = await a.gql(DeleteDoc, { agentId, documentId: drop.id });
    expect(del.errors).toBeUndefined();
    expect(del.data?.deleteKnowledgeDocument).toBe(drop.id);
    const rest = await a.request('GET', `/api/agents/${agentId}/knowledge`);
    expect(rest.body.documents.map((d: { id: string }) => d.id)).toEqual([keep.id]);
    const again = await a.gql(DeleteDoc, { agentId, documentId: drop.id });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', field: 'documentId' });
  });

  it('reports the REST error codes: validation, 409, 422 and 404 across accounts', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const bad = await a.gql(CreateIdentity, { input: { localPart: 'no..good' } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'localPart' }] });
    const local = `dupe${Date.now().toString(36)}`;
    const ok = await a.gql(CreateIdentity, { input: { localPart: local } });
    expect((await b.gql(CreateIdentity, { input: { localPart: local } })).errors?.[0]?.extensions?.code).toBe(
      'ADDRESS_TAKEN',
    );
    const modelless = await a.gql(CreateAgent, { input: { name: 'n', systemPrompt: '', contextSources: [] } });
    const assign = await a.gql(UpdateIdentity, {
      id: ok.data!.createIdentity.id,
      input: { agentId: modelless.data!.createAgent.id },
    });
    expect(assign.errors?.[0]?.extensions).toMatchObject({ code: 'AGENT_TEXT_MODEL_REQUIRED', status: 422 });
    const foreign = await b.gql(Inbox, { id: ok.data!.createIdentity.id });
    expect(foreign.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const send = await b.gql(Send, {
      identityId: ok.data!.createIdentity.id,
      input: { to: 'x@example.com', subject: 's', body: 'b' },
    });
    expect(send.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await b.gql(Lists)).data).toEqual({ emailIdentities: { edges: [] }, agents: { edges: [] } });
  });
});
