import { describe, expect } from 'vitest';
import { graphql } from '../generated/gql.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';

const CreateContact = graphql(`
  mutation ContactsCreate($input: CreateContactInput!) {
    createContact(input: $input) {
      __typename ... on CreateContactPayload { contact { id name emails phones createdAt updatedAt } }
      ... on Error { code field details { field code } }
    }
  }
`);
const UpdateContact = graphql(`
  mutation ContactsUpdate($input: UpdateContactInput!) {
    updateContact(input: $input) {
      __typename ... on UpdateContactPayload { contact { id name emails phones } }
      ... on Error { code field details { field code } }
    }
  }
`);
const DeleteContact = graphql(`
  mutation ContactsDelete($input: DeleteContactInput!) {
    deleteContact(input: $input) { __typename ... on DeleteContactPayload { deletedContactId } ... on Error { code field } }
  }
`);
const ListContacts = graphql(`
  query ContactsList($first: Int, $after: String) {
    contacts(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id name emails } } }
  }
`);
const OneContact = graphql(`
  query ContactsOne($id: ID!) { contact(id: $id) { id name phones } }
`);

const it = appTest();

describe.concurrent('contacts: who owns which addresses and numbers (REST and GraphQL)', () => {
  it('creates, reads, updates and deletes a contact; numbers become E.164 and addresses lower-case', async ({
    t,
    a,
  }) => {
    const created = await a.request('POST', '/api/contacts', {
      name: 'Carol',
      emails: ['Carol@Example.com', 'carol@example.com'],
      phones: ['(415) 555-0123', '+1 415 555 0124'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Carol',
      emails: ['carol@example.com'],
      phones: ['+14155550123', '+14155550124'],
    });
    expect(created.body.createdAt).toBe(created.body.updatedAt);
    const id = created.body.id as string;
    expect((await a.request('GET', `/api/contacts/${id}`)).body).toEqual(created.body);

    const patched = await a.request('PATCH', `/api/contacts/${id}`, { phones: ['+14155550125'] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Carol', emails: ['carol@example.com'], phones: ['+14155550125'] });

    // The old numbers are free again; the new one is taken.
    const other = await a.request('POST', '/api/contacts', { name: 'Dan', phones: ['+14155550123'] });
    expect(other.status).toBe(201);
    const clash = await a.request('POST', '/api/contacts', { name: 'Eve', phones: ['+14155550100', '4155550125'] });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: 'CONTACT_PHONE_TAKEN', field: 'phones.1' });
    const mailClash = await a.request('PATCH', `/api/contacts/${other.body.id}`, { emails: ['CAROL@example.com'] });
    expect(mailClash.status).toBe(409);
    expect(mailClash.body.error).toMatchObject({ code: 'CONTACT_EMAIL_TAKEN', field: 'emails.0' });
    expect((await a.request('GET', `/api/contacts/${other.body.id}`)).body.emails).toEqual([]); // nothing changed

    // Another account may hold the same handles, and cannot see this account's contacts.
    const b = await t.newAccount();
    expect((await b.request('POST', '/api/contacts', { name: 'C', emails: ['carol@example.com'] })).status).toBe(201);
    expect((await b.request('GET', `/api/contacts/${id}`)).status).toBe(404);
    expect((await b.request('PATCH', `/api/contacts/${id}`, { name: 'x' })).status).toBe(404);
    expect((await b.request('DELETE', `/api/contacts/${id}`)).status).toBe(404);

    expect((await a.request('DELETE', `/api/contacts/${id}`)).status).toBe(204);
    expect((await a.request('GET', `/api/contacts/${id}`)).status).toBe(404);
    expect((await a.request('POST', '/api/contacts', { name: 'F', emails: ['carol@example.com'] })).status).toBe(201);
  });

  it('refuses bad input with 400 and every problem listed, changing nothing', async ({ t, a }) => {
    const bad = await a.request('POST', '/api/contacts', {
      name: ' ',
      emails: ['not-an-address'],
      phones: ['12', '+14155550123'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(
      ['emails.0', 'name', 'phones.0'].sort(),
    );
    expect((await a.request('GET', '/api/contacts')).body).toEqual({ contacts: [], nextCursor: null });
    const many = await a.request('POST', '/api/contacts', {
      name: 'x',
      emails: Array.from({ length: 21 }, (_, i) => `a${i}@example.com`),
    });
    expect(many.status).toBe(400);
    expect((await a.request('POST', '/api/contacts', { name: 'x', extra: 1 })).status).toBe(400);
    expect((await a.request('GET', '/api/contacts?limit=0')).status).toBe(400);
    expect((await a.request('GET', '/api/contacts?limit=201')).status).toBe(400);
    expect((await a.request('GET', '/api/contacts?cursor=%%%')).status).toBe(400);
    const noScope = await t.newAccount(['compliance']);
    expect((await noScope.request('GET', '/api/contacts')).status).toBe(403);
  });

  it('pages with limit and cursor, oldest first, nextCursor null on the last page', async ({ a }) => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await a.request('POST', '/api/contacts', { name: `c${i}`, emails: [`c${i}@example.com`] })).body.id);
    }
    const first = await a.request('GET', '/api/contacts?limit=2');
    expect(first.body.contacts.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await a.request('GET', `/api/contacts?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.contacts.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    const last = await a.request('GET', `/api/contacts?limit=2&cursor=${second.body.nextCursor}`);
    expect(last.body).toMatchObject({ nextCursor: null });
    expect(last.body.contacts.map((c: { id: string }) => c.id)).toEqual(ids.slice(4));
    expect((await a.request('GET', '/api/contacts')).body.contacts).toHaveLength(5);
  });

  it('GraphQL has the same contacts, rules and codes', async ({ t, a }) => {
    const created = payload(
      (await a.gql(CreateContact, { input: { name: 'Gil', emails: ['GIL@example.com'], phones: ['415-555-0130'] } }))
        .data?.createContact,
      'CreateContactPayload',
    );
    expect(created.contact).toMatchObject({ name: 'Gil', emails: ['gil@example.com'], phones: ['+14155550130'] });
    const id = created.contact.id;
    const clash = typedError(
      (await a.gql(CreateContact, { input: { name: 'H', emails: ['gil@example.com'] } })).data?.createContact,
    );
    expect(clash).toMatchObject({ code: 'CONTACT_EMAIL_TAKEN', field: 'emails.0' });
    const invalid = typedError(
      (await a.gql(CreateContact, { input: { name: 'H', phones: ['1'] } })).data?.createContact,
    );
    expect(invalid).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'phones.0', code: 'INVALID_FORMAT' }],
    });
    const updated = payload(
      (await a.gql(UpdateContact, { input: { id, name: 'Gil B' } })).data?.updateContact,
      'UpdateContactPayload',
    );
    expect(updated.contact).toMatchObject({ name: 'Gil B', emails: ['gil@example.com'], phones: ['+14155550130'] });
    expect((await a.gql(OneContact, { id })).data?.contact).toEqual({ id, name: 'Gil B', phones: ['+14155550130'] });
    const list = await a.gql(ListContacts, { first: 10 });
    expect(list.data?.contacts.totalCount).toBe(1);
    expect(list.data?.contacts.edges.map((e) => e.node.id)).toEqual([id]);
    const b = await t.newAccount();
    expect(typedError((await b.gql(DeleteContact, { input: { id } })).data?.deleteContact)).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(
      payload((await a.gql(DeleteContact, { input: { id } })).data?.deleteContact, 'DeleteContactPayload'),
    ).toEqual({
      __typename: 'DeleteContactPayload',
      deletedContactId: id,
    });
    expect((await a.gql(ListContacts, {})).data?.contacts.totalCount).toBe(0);
  });
});
