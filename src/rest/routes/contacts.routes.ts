import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  contactShape,
  createContactInput,
  listContactsInput,
  updateContactInput,
} from '../../domain/contacts/contact.schemas.js';
import {
  createContact,
  deleteContact,
  getContact,
  listContacts,
  updateContact,
} from '../../domain/contacts/contact.service.js';
import { idParams } from '../../domain/validation.js';
import { actorOf } from '../auth.js';

// The response shape is the domain's declaration of a contact (contact.schemas.ts).
const contact = contactShape;

/** REST routes of contacts (docs/email.md "Contacts"; scope `email`). */
export async function contactsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['contacts'];

  r.post(
    '/api/contacts',
    {
      schema: {
        operationId: 'createContact',
        errors: ['FORBIDDEN', 'CONTACT_EMAIL_TAKEN', 'CONTACT_PHONE_TAKEN'],
        tags,
        summary: 'Create a contact (201). 409 when an address or number already belongs to another contact.',
        body: createContactInput,
        response: { 201: contact },
      },
    },
    async (request, reply) => reply.status(201).send(await createContact(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/contacts',
    {
      schema: {
        operationId: 'listContacts',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'Contacts, oldest first; limit 1–200 (default 50); nextCursor null on the last page.',
        querystring: listContactsInput,
        response: { 200: z.object({ contacts: z.array(contact), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listContacts(ctx, actorOf(request), request.query),
  );
  r.get(
    '/api/contacts/:id',
    {
      schema: {
        operationId: 'getContact',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One contact.',
        params: idParams,
        response: { 200: contact },
      },
    },
    async (request) => getContact(ctx, actorOf(request), request.params.id),
  );
  r.patch(
    '/api/contacts/:id',
    {
      schema: {
        operationId: 'updateContact',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'CONTACT_EMAIL_TAKEN', 'CONTACT_PHONE_TAKEN'],
        tags,
        summary: 'Change the name, or replace the addresses or numbers (a list replaces the old one).',
        params: idParams,
        body: updateContactInput,
        response: { 200: contact },
      },
    },
    async (request) => updateContact(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/api/contacts/:id',
    {
      schema: {
        operationId: 'deleteContact',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Delete a contact (204); its addresses and numbers are free again.',
        params: idParams,
        response: { 204: z.undefined().describe('Deleted.') },
      },
    },
    async (request, reply) => {
      await deleteContact(ctx, actorOf(request), request.params.id);
      return reply.status(204).send();
    },
  );
}
