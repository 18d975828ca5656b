import { contactShape, createContactInput, updateContactInput } from '../../domain/contacts/contact.schemas.js';
import {
  countContacts,
  createContact,
  deleteContact,
  getContactRow,
  listContactRows,
  updateContact,
} from '../../domain/contacts/contact.service.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { shapeFields } from '../shape-fields.js';
import { NodeRef } from './node.js';

builder.prismaObject('Contact', {
  interfaces: [NodeRef],
  description:
    'Who owns which addresses and numbers. An agent draws SMS and call history only from the handles of the contact ' +
    'whose emails contain the authenticated sender (docs/email.md "Who sees what").',
  // The fields are the domain's declaration (contact.schemas.ts), as the REST answer's.
  fields: (t) => shapeFields(t, contactShape, { ids: ['id'] }),
});

builder.queryFields((t) => ({
  contacts: t.prismaConnection(
    {
      type: 'Contact',
      cursor: 'id',
      description: 'The account’s contacts, oldest first.',
      totalCount: (_connection, _args, ctx) => countContacts(ctx.app, ctx.actor),
      resolve: (query, _root, _args, ctx) => listContactRows(ctx.app, ctx.actor, query),
    },
    { name: 'ContactConnection' },
    { name: 'ContactEdge' },
  ),
  contact: t.prismaField({
    type: 'Contact',
    description: 'One contact.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getContactRow(ctx.app, ctx.actor, String(args.id), query),
  }),
}));

const CreateContactInput = builder.inputType('CreateContactInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    emails: t.stringList({ description: 'Addresses (at most 20); stored lower-cased.' }),
    phones: t.stringList({ description: 'Numbers (at most 20); stored as E.164 (US is the default country).' }),
  }),
});

const UpdateContactInput = builder.inputType('UpdateContactInput', {
  description: 'The contact and the fields to change; absent fields stay, a list replaces the old one.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The contact.' }),
    name: t.string(),
    emails: t.stringList(),
    phones: t.stringList(),
  }),
});

const DeleteContactInput = builder.inputType('DeleteContactInput', {
  description: 'The contact to delete (its addresses and numbers are free again).',
  fields: (t) => ({ id: t.id({ required: true }) }),
});

/** `<Verb>ContactPayload { contact }`: the contact re-read with the selection the client asked for. */
const contactPayload = (name: string, description: string) =>
  builder.objectRef<{ contactId: string }>(name).implement({
    description,
    fields: (t) => ({
      contact: t.prismaField({
        type: 'Contact',
        resolve: (query, p, _args, ctx) => getContactRow(ctx.app, ctx.actor, p.contactId, query),
      }),
    }),
  });
const CreateContactPayload = contactPayload('CreateContactPayload', 'The new contact.');
const UpdateContactPayload = contactPayload('UpdateContactPayload', 'The contact after the change.');

const DeleteContactPayload = builder.objectRef<{ deletedContactId: string }>('DeleteContactPayload').implement({
  description: 'The id of the deleted contact.',
  fields: (t) => ({ deletedContactId: t.exposeID('deletedContactId') }),
});

builder.mutationFields((t) => ({
  createContact: t.field({
    type: CreateContactPayload,
    errors: {},
    description: 'Creates a contact (CONTACT_EMAIL_TAKEN / CONTACT_PHONE_TAKEN when a handle belongs to another).',
    args: { input: t.arg({ type: CreateContactInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      contactId: (await createContact(ctx.app, ctx.actor, parseArgs(ctx, 'email', createContactInput, args.input))).id,
    }),
  }),
  updateContact: t.field({
    type: UpdateContactPayload,
    errors: {},
    description: 'Changes a contact.',
    args: { input: t.arg({ type: UpdateContactInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      contactId: (
        await updateContact(ctx.app, ctx.actor, String(id), parseArgs(ctx, 'email', updateContactInput, input))
      ).id,
    }),
  }),
  deleteContact: t.field({
    type: DeleteContactPayload,
    errors: {},
    description: 'Deletes a contact.',
    args: { input: t.arg({ type: DeleteContactInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteContact(ctx.app, ctx.actor, String(args.input.id));
      return { deletedContactId: String(args.input.id) };
    },
  }),
}));
