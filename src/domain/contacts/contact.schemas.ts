import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { pageQuery } from '../paging.js';

/** Most addresses and most numbers one contact holds. */
export const MAX_CONTACT_HANDLES = 20;

/**
 * A phone number as E.164 (`+` and digits), parsed by libphonenumber-js with US as the default country, so
 * `(415) 555-0123` and `+1 415 555 0123` both give `+14155550123`; undefined when it is not a valid number.
 */
export function toE164(value: string): string | undefined {
  const parsed = parsePhoneNumberFromString(value.trim(), 'US');
  return parsed?.isValid() ? parsed.number : undefined;
}

const phone = z
  .string()
  .max(40)
  .transform((v, c) => {
    const e164 = toE164(v);
    if (!e164) {
      c.addIssue({
        code: 'custom',
        message: 'must be a valid phone number, e.g. +14155550100 (US numbers may omit +1)',
        params: { code: 'INVALID_FORMAT' },
      });
      return z.NEVER;
    }
    return e164;
  })
  .describe('Phone number, stored as E.164 (libphonenumber-js; US is the default country).');

const email = z
  .string()
  .trim()
  .email()
  .max(320)
  .transform((v) => v.toLowerCase())
  .describe('Email address, stored lower-cased.');

/** The list without repeats, first occurrence kept (after normalisation, so `A@x` and `a@x` are one). */
const unique = (item: z.ZodType<string, string>) =>
  z
    .array(item)
    .max(MAX_CONTACT_HANDLES)
    .transform((a) => [...new Set(a)]);

const name = z.string().trim().min(1).max(200).describe('Display name, 1 to 200 characters.');

/** Body of POST /api/contacts and input of `createContact`. */
export const createContactInput = z
  .object({
    name,
    emails: unique(email).default([]).describe(`Addresses (at most ${MAX_CONTACT_HANDLES}), lower-cased.`),
    phones: unique(phone).default([]).describe(`Numbers (at most ${MAX_CONTACT_HANDLES}), normalised to E.164.`),
  })
  .strict();
/** Parsed createContactInput. */
export type CreateContactInput = z.output<typeof createContactInput>;

/** Body of PATCH /api/contacts/{id} and input of `updateContact`: absent fields stay; a list replaces the old one. */
export const updateContactInput = z
  .object({
    name: name.optional(),
    emails: unique(email).optional().describe('Replaces every address of the contact.'),
    phones: unique(phone).optional().describe('Replaces every number of the contact.'),
  })
  .strict();
/** Parsed updateContactInput. */
export type UpdateContactInput = z.output<typeof updateContactInput>;

/** Query of GET /api/contacts: the one paging rule (`limit` 1–200 default 50, `cursor`; docs/conventions.md). */
export const listContactsInput = pageQuery;
/** Parsed listContactsInput. */
export type ListContactsInput = z.output<typeof listContactsInput>;

/**
 * THE declaration of a contact (issue 23 "one declaration per noun"; docs/email.md "Contacts"): `ContactView` is
 * inferred from it, the REST routes answer with it and GraphQL's Contact type lists its fields from it
 * (src/graphql/shape-fields.ts). A new field is added here and in `contactView` (plus the store's record when it is a
 * new column).
 */
export const contactShape = z.object({
  id: z.string().describe('UUID.'),
  name: z.string(),
  emails: z.array(z.string()).describe('Lower-cased addresses; each belongs to one contact.'),
  phones: z.array(z.string()).describe('E.164 numbers; each belongs to one contact.'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
