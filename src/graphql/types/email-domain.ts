// Mail domains and SMTP credentials (issue 20 sections 3 and 4): the DNS records of each domain, custom domains and
// their verification, and SMTP submission passwords of identities.
import {
  addDomain,
  addDomainInput,
  type DnsRecordView,
  type DomainView,
  deleteDomain,
  domainParams,
  getDomain,
  listDomains,
  type RecordCheck,
  verifyDomain,
} from '../../domain/email/domain.service.js';
import { createSmtpCredentials, type SmtpCredentialsView } from '../../domain/email/smtp-credentials.service.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';

const DomainStatusEnum = builder.enumType('EmailDomainStatus', {
  description: '`pending` until its DNS records verify; configured domains are `verified`.',
  values: ['pending', 'verified'] as const,
});
const DnsRecordPurposeEnum = builder.enumType('DnsRecordPurpose', {
  description: 'What a record is for: `mx` (RFC 5321), `spf` (RFC 7208), `dkim` (RFC 6376), `dmarc` (RFC 7489).',
  values: ['mx', 'spf', 'dkim', 'dmarc'] as const,
});
const DnsRecordCheckStatusEnum = builder.enumType('DnsRecordCheckStatus', {
  description: '`ok`; `missing`; `wrong` (records there, none fits); `error` (the lookup failed: try again later).',
  values: ['ok', 'missing', 'wrong', 'error'] as const,
});

const DnsRecordCheckRef = builder.objectRef<RecordCheck>('DnsRecordCheck').implement({
  description: 'What the resolver answered for a record.',
  fields: (t) => ({
    status: t.field({ type: DnsRecordCheckStatusEnum, resolve: (c) => c.status }),
    found: t.exposeStringList('found', { description: 'Values found (TXT joined, MX as `<preference> <host>`).' }),
    detail: t.exposeString('detail', { nullable: true, description: 'Why it is not ok; null when ok.' }),
  }),
});

const DnsRecordRef = builder.objectRef<DnsRecordView>('DnsRecord').implement({
  description: 'One DNS record to publish.',
  fields: (t) => ({
    type: t.exposeString('type', { description: '`MX` or `TXT`.' }),
    name: t.exposeString('name', { description: 'Owner name, fully qualified.' }),
    value: t.exposeString('value', { description: 'Record data (MX: `<preference> <host>`).' }),
    purpose: t.field({ type: DnsRecordPurposeEnum, resolve: (r) => r.purpose }),
    check: t.field({
      type: DnsRecordCheckRef,
      nullable: true,
      description: 'Only in the answer of verifyEmailDomain.',
      resolve: (r) => r.check ?? null,
    }),
  }),
});

const EmailDomainRef = builder.objectRef<DomainView>('EmailDomain').implement({
  description: 'A mail domain and the DNS records it needs (issue 20 section 4).',
  fields: (t) => ({
    domain: t.exposeString('domain'),
    status: t.field({ type: DomainStatusEnum, resolve: (d) => d.status }),
    configured: t.exposeBoolean('configured', { description: 'One of EMAIL_DOMAINS rather than the account’s own.' }),
    dnsRecords: t.field({ type: [DnsRecordRef], resolve: (d) => d.dnsRecords }),
  }),
});

builder.queryFields((t) => ({
  emailDomains: t.field({
    type: [EmailDomainRef],
    description: 'The configured domains (verified) and the account’s own, with the records to publish.',
    resolve: (_root, _args, ctx) => listDomains(ctx.app, ctx.actor),
  }),
  emailDomain: t.field({
    type: EmailDomainRef,
    description: 'One domain (NOT_FOUND for another account’s).',
    args: { domain: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) =>
      getDomain(ctx.app, ctx.actor, parseArgs(ctx, 'email', domainParams, { domain: args.domain }).domain),
  }),
}));

const DomainInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({ domain: t.string({ required: true, description: 'A DNS domain name.' }) }),
  });
const AddEmailDomainInput = DomainInput('AddEmailDomainInput', 'A custom domain to add (pending until verified).');
const VerifyEmailDomainInput = DomainInput('VerifyEmailDomainInput', 'The domain whose records to check now.');
const DeleteEmailDomainInput = DomainInput('DeleteEmailDomainInput', 'The custom domain to remove.');

const domainPayload = (name: string, description: string) =>
  builder.objectRef<DomainView>(name).implement({
    description,
    fields: (t) => ({ emailDomain: t.field({ type: EmailDomainRef, resolve: (d) => d }) }),
  });
const AddEmailDomainPayload = domainPayload('AddEmailDomainPayload', 'The new domain (pending).');
const VerifyEmailDomainPayload = domainPayload('VerifyEmailDomainPayload', 'The domain with a check per record.');
const DeleteEmailDomainPayload = builder.objectRef<{ domain: string }>('DeleteEmailDomainPayload').implement({
  description: 'The removed domain.',
  fields: (t) => ({ deletedDomain: t.exposeString('domain') }),
});

const CreateSmtpCredentialsInput = builder.inputType('CreateSmtpCredentialsInput', {
  description: 'The identity to issue an SMTP submission password for.',
  fields: (t) => ({ identityId: t.id({ required: true }) }),
});
const CreateSmtpCredentialsPayload = builder.objectRef<SmtpCredentialsView>('CreateSmtpCredentialsPayload').implement({
  description: 'Where and how a mail client submits as the identity; the password is shown only here.',
  fields: (t) => ({
    smtpHost: t.exposeString('smtpHost'),
    smtpPort: t.exposeInt('smtpPort', { description: 'Implicit TLS (RFC 8314).' }),
    smtpUser: t.exposeString('smtpUser', { description: 'The identity’s address.' }),
    smtpPass: t.exposeString('smtpPass', { description: 'Replaces any earlier password; stored only as a hash.' }),
  }),
});

builder.mutationFields((t) => ({
  addEmailDomain: t.field({
    type: AddEmailDomainPayload,
    errors: {},
    description: 'Adds a custom domain (DOMAIN_TAKEN when in use).',
    args: { input: t.arg({ type: AddEmailDomainInput, required: true }) },
    resolve: (_root, args, ctx) =>
      addDomain(ctx.app, ctx.actor, parseArgs(ctx, 'email', addDomainInput, args.input, { keepNulls: true })),
  }),
  verifyEmailDomain: t.field({
    type: VerifyEmailDomainPayload,
    errors: {},
    description: 'Checks the domain’s DNS records now; verified once every record is ok (email.domain.verified).',
    args: { input: t.arg({ type: VerifyEmailDomainInput, required: true }) },
    resolve: (_root, args, ctx) =>
      verifyDomain(ctx.app, ctx.actor, parseArgs(ctx, 'email', domainParams, args.input, { keepNulls: true }).domain),
  }),
  deleteEmailDomain: t.field({
    type: DeleteEmailDomainPayload,
    errors: {},
    description: 'Removes a custom domain and its DKIM key (DOMAIN_IN_USE while active identities use it).',
    args: { input: t.arg({ type: DeleteEmailDomainInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      const { domain } = parseArgs(ctx, 'email', domainParams, args.input, { keepNulls: true });
      await deleteDomain(ctx.app, ctx.actor, domain);
      return { domain: domain.toLowerCase() };
    },
  }),
  createSmtpCredentials: t.field({
    type: CreateSmtpCredentialsPayload,
    errors: {},
    description: 'Issues an SMTP submission password for an identity; the previous one stops working.',
    args: { input: t.arg({ type: CreateSmtpCredentialsInput, required: true }) },
    resolve: (_root, args, ctx) => createSmtpCredentials(ctx.app, ctx.actor, String(args.input.identityId)),
  }),
}));
