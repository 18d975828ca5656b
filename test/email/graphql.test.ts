import { describe, expect } from 'vitest';
import { graphql } from '../generated/gql.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';

const CreateAgent = graphql(`
  mutation EmailCreateAgent($input: CreateAgentInput!) {
    createAgent(input: $input) { __typename ... on CreateAgentPayload { agent { id name textModel contextSources } } ... on Error { code field details { field code } } }
  }
`);
const AddDoc = graphql(`
  mutation EmailAddDoc($input: AddKnowledgeDocumentInput!) {
    addKnowledgeDocument(input: $input) {
      __typename ... on AddKnowledgeDocumentPayload { knowledgeDocument { id agentId title } } ... on Error { code field details { field code } }
    }
  }
`);
const DeleteDoc = graphql(`
  mutation EmailDeleteDoc($input: DeleteKnowledgeDocumentInput!) {
    deleteKnowledgeDocument(input: $input) {
      __typename ... on DeleteKnowledgeDocumentPayload { deletedKnowledgeDocumentId } ... on Error { code field details { field code } }
    }
  }
`);
const UpdateAgent = graphql(`
  mutation EmailUpdateAgent($input: UpdateAgentInput!) {
    updateAgent(input: $input) {
      __typename ... on UpdateAgentPayload { agent { id name knowledgeDocuments { title } } } ... on Error { code field details { field code } }
    }
  }
`);
const DeleteAgent = graphql(`
  mutation EmailDeleteAgent($input: DeleteAgentInput!) {
    deleteAgent(input: $input) { __typename ... on DeleteAgentPayload { deletedAgentId } ... on Error { code field details { field code } } }
  }
`);
const CreateIdentity = graphql(`
  mutation EmailCreateIdentity($input: CreateEmailIdentityInput!) {
    createEmailIdentity(input: $input) {
      __typename
      ... on CreateEmailIdentityPayload {
        emailIdentity {
          id address localPart domain displayName agentId status smtpHost smtpPort smtpUser smtpPass createdAt
          agent { id name }
        }
      }
      ... on Error { code field details { field code } }
    }
  }
`);
const UpdateIdentity = graphql(`
  mutation EmailUpdateIdentity($input: UpdateEmailIdentityInput!) {
    updateEmailIdentity(input: $input) {
      __typename ... on UpdateEmailIdentityPayload { emailIdentity { id displayName agentId } } ... on Error { code field details { field code } }
    }
  }
`);
const DeleteIdentity = graphql(`
  mutation EmailDeleteIdentity($input: DeleteEmailIdentityInput!) {
    deleteEmailIdentity(input: $input) {
      __typename ... on DeleteEmailIdentityPayload { emailIdentity { id status } } ... on Error { code field details { field code } }
    }
  }
`);
const Send = graphql(`
  mutation EmailSend($input: SendEmailInput!) {
    sendEmail(input: $input) { __typename ... on SendEmailPayload { messageId threadId } ... on Error { code field details { field code } } }
  }
`);
const Reply = graphql(`
  mutation EmailReply($input: ReplyToEmailThreadInput!) {
    replyToEmailThread(input: $input) { __typename ... on ReplyToEmailThreadPayload { messageId threadId } ... on Error { code field details { field code } } }
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

const it = appTest();

describe.concurrent('email over GraphQL', () => {
  it('creates agents and identities, sends and replies, and reads threads as a Relay connection', async ({ t, a }) => {
    const agent = await a.gql(CreateAgent, {
      input: { name: 'Desk', systemPrompt: 'Help.', textModel: 'm', contextSources: ['knowledge'] },
    });
    expect(agent.errors).toBeUndefined();
    const agentId = payload(agent.data!.createAgent, 'CreateAgentPayload').agent.id;
    const added = await a.gql(AddDoc, { input: { agentId, title: 'Hours', content: '9-5' } });
    expect(payload(added.data?.addKnowledgeDocument, 'AddKnowledgeDocumentPayload').knowledgeDocument).toMatchObject({
      agentId,
      title: 'Hours',
    });
    const renamed = await a.gql(UpdateAgent, { input: { id: agentId, name: 'Front desk' } });
    expect(payload(renamed.data?.updateAgent, 'UpdateAgentPayload').agent).toEqual({
      id: agentId,
      name: 'Front desk',
      knowledgeDocuments: [{ title: 'Hours' }],
    });

    const local = `gql${Date.now().toString(36)}`;
    const created = await a.gql(CreateIdentity, { input: { localPart: local, agentId } });
    expect(created.errors).toBeUndefined();
    expect(payload(created.data!.createEmailIdentity, 'CreateEmailIdentityPayload').emailIdentity).toMatchObject({
      address: `${local}@agents.switchboard.local`,
      status: 'active',
      smtpPort: t.app.smtpSubmissionPort(),
      smtpUser: `${local}@agents.switchboard.local`,
      smtpPass: null,
      agent: { id: agentId, name: 'Front desk' },
    });
    const identityId = payload(created.data!.createEmailIdentity, 'CreateEmailIdentityPayload').emailIdentity.id;
    const changed = await a.gql(UpdateIdentity, { input: { id: identityId, displayName: 'Desk' } });
    expect(payload(changed.data?.updateEmailIdentity, 'UpdateEmailIdentityPayload').emailIdentity).toEqual({
      id: identityId,
      displayName: 'Desk',
      agentId,
    });

    const threadIds: string[] = [];
    for (const subject of ['One', 'Two', 'Three']) {
      const sent = await a.gql(Send, { input: { identityId, to: ['x@example.com'], subject, body: 'b' } });
      expect(sent.errors).toBeUndefined();
      threadIds.push(payload(sent.data!.sendEmail, 'SendEmailPayload').threadId);
    }
    const replied = await a.gql(Reply, { input: { identityId, threadId: threadIds[0]!, body: 'again' } });
    const reply = payload(replied.data!.replyToEmailThread, 'ReplyToEmailThreadPayload');
    expect(reply.threadId).toBe(threadIds[0]);

    const page1 = await a.gql(Inbox, { id: identityId, first: 2 });
    expect(page1.errors).toBeUndefined();
    const conn = page1.data!.emailIdentity.threads;
    expect(conn.edges.map((e) => e.node.threadId)).toEqual([threadIds[0], threadIds[2]]);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    expect(conn.edges[0]!.node).toMatchObject({ subject: 'One', messageCount: 2 });
    expect(conn.edges[0]!.node.messages.map((m) => m.subject)).toEqual(['One', 'Re: One']);
    expect(conn.edges[0]!.node.messages[1]).toMatchObject({
      messageId: reply.messageId,
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

    const deprovisioned = await a.gql(DeleteIdentity, { input: { id: identityId } });
    expect(payload(deprovisioned.data?.deleteEmailIdentity, 'DeleteEmailIdentityPayload').emailIdentity).toEqual({
      id: identityId,
      status: 'deprovisioning',
    });
    const agentDeleted = await a.gql(DeleteAgent, { input: { id: agentId } });
    expect(payload(agentDeleted.data?.deleteAgent, 'DeleteAgentPayload').deletedAgentId).toBe(agentId);
  });

  it('pages threads like REST: activity during paging neither repeats nor reorders a thread on page 2', async ({
    a,
  }) => {
    const created = await a.gql(CreateIdentity, { input: { localPart: `pg${Date.now().toString(36)}` } });
    const identityId = payload(created.data!.createEmailIdentity, 'CreateEmailIdentityPayload').emailIdentity.id;
    const ids: string[] = [];
    for (const subject of ['T0', 'T1', 'T2']) {
      const sent = await a.gql(Send, { input: { identityId, to: ['x@example.com'], subject, body: 'b' } });
      ids.push(payload(sent.data!.sendEmail, 'SendEmailPayload').threadId);
    }
    const gql1 = (await a.gql(ThreadPage, { id: identityId, first: 2 })).data!.emailIdentity.threads;
    const rest1 = (await a.request('GET', `/api/email/identities/${identityId}/threads?limit=2`)).body;
    expect(gql1.edges.map((e) => e.node.threadId)).toEqual([ids[2], ids[1]]);
    expect(rest1.threads.map((th: { threadId: string }) => th.threadId)).toEqual([ids[2], ids[1]]);
    expect(gql1.pageInfo.hasNextPage).toBe(true);

    // The last thread of page 1 gets a reply and moves to the front.
    await a.gql(Reply, { input: { identityId, threadId: ids[1]!, body: 'bump' } });
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

  it('deletes a knowledge document like REST: gone from the agent, NOT_FOUND again and for another account', async ({
    t,
    a,
  }) => {
    const b = await t.newAccount();
    const created = await a.gql(CreateAgent, {
      input: { name: 'Docs', systemPrompt: '', textModel: 'm', contextSources: [] },
    });
    const agentId = payload(created.data!.createAgent, 'CreateAgentPayload').agent.id;
    const addDoc = async (title: string) =>
      payload(
        (await a.gql(AddDoc, { input: { agentId, title, content: title } })).data!.addKnowledgeDocument,
        'AddKnowledgeDocumentPayload',
      ).knowledgeDocument;
    const keep = await addDoc('Keep');
    const drop = await addDoc('Drop');

    const byB = await b.gql(DeleteDoc, { input: { agentId, documentId: drop.id } });
    expect(byB.data?.deleteKnowledgeDocument).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    const del = await a.gql(DeleteDoc, { input: { agentId, documentId: drop.id } });
    expect(del.errors).toBeUndefined();
    expect(
      payload(del.data?.deleteKnowledgeDocument, 'DeleteKnowledgeDocumentPayload').deletedKnowledgeDocumentId,
    ).toBe(drop.id);
    const rest = await a.request('GET', `/api/agents/${agentId}/knowledge`);
    expect(rest.body.documents.map((d: { id: string }) => d.id)).toEqual([keep.id]);
    const again = await a.gql(DeleteDoc, { input: { agentId, documentId: drop.id } });
    expect(typedError(again.data?.deleteKnowledgeDocument)).toMatchObject({ code: 'NOT_FOUND', field: 'documentId' });
  });

  it('answers the REST error codes as typed errors: validation, 409, 422 and 404 across accounts', async ({ t, a }) => {
    const b = await t.newAccount();
    const bad = await a.gql(CreateIdentity, { input: { localPart: 'no..good' } });
    expect(bad.data?.createEmailIdentity).toMatchObject({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      field: 'localPart',
      details: [{ field: 'localPart' }],
    });
    const local = `dupe${Date.now().toString(36)}`;
    const ok = await a.gql(CreateIdentity, { input: { localPart: local } });
    const okId = payload(ok.data!.createEmailIdentity, 'CreateEmailIdentityPayload').emailIdentity.id;
    expect((await b.gql(CreateIdentity, { input: { localPart: local } })).data?.createEmailIdentity).toMatchObject({
      __typename: 'ConflictError',
      code: 'ADDRESS_TAKEN',
    });
    const modelless = await a.gql(CreateAgent, { input: { name: 'n', systemPrompt: '', contextSources: [] } });
    const assign = await a.gql(UpdateIdentity, {
      input: { id: okId, agentId: payload(modelless.data!.createAgent, 'CreateAgentPayload').agent.id },
    });
    expect(assign.data?.updateEmailIdentity).toMatchObject({
      __typename: 'UnprocessableError',
      code: 'AGENT_TEXT_MODEL_REQUIRED',
    });
    const foreign = await b.gql(Inbox, { id: okId });
    expect(foreign.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const send = await b.gql(Send, { input: { identityId: okId, to: ['x@example.com'], subject: 's', body: 'b' } });
    expect(typedError(send.data?.sendEmail)).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    expect((await b.gql(Lists)).data).toEqual({ emailIdentities: { edges: [] }, agents: { edges: [] } });
  });
});
