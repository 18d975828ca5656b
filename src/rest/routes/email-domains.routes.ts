import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  addDomain,
  addDomainInput,
  deleteDomain,
  domainParams,
  getDomain,
  listDomains,
  verifyDomain,
} from '../../domain/email/domain.service.js';
import {
  dnsRecordShape as dnsRecord,
  domainShape as domain,
  recordCheckShape as recordCheck,
} from '../../domain/email/email.shapes.js';
import { actorOf } from '../auth.js';

/** REST routes of mail domains (issue 20 section 4): the records to publish, custom domains and their verification. */
export async function emailDomainRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['email'];
  r.get(
    '/api/email/domains',
    {
      schema: {
        operationId: 'listEmailDomains',
        errors: ['FORBIDDEN'],
        tags,
        summary: 'The configured domains (verified) and the account’s own, with the DNS records to publish.',
        response: { 200: z.object({ domains: z.array(domain) }) },
      },
    },
    async (request) => ({ domains: await listDomains(ctx, actorOf(request)) }),
  );
  r.post(
    '/api/email/domains',
    {
      schema: {
        operationId: 'addEmailDomain',
        errors: ['FORBIDDEN', 'DOMAIN_TAKEN'],
        tags,
        summary: 'Add a custom domain (201, pending until verified). 409 DOMAIN_TAKEN when in use.',
        body: addDomainInput,
        response: { 201: domain },
      },
    },
    async (request, reply) => reply.status(201).send(await addDomain(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/email/domains/:domain',
    {
      schema: {
        operationId: 'getEmailDomain',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One domain with its DNS records.',
        params: domainParams,
        response: { 200: domain },
      },
    },
    async (request) => getDomain(ctx, actorOf(request), request.params.domain),
  );
  r.post(
    '/api/email/domains/:domain/verify',
    {
      schema: {
        operationId: 'verifyEmailDomain',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Check the DNS records now: the domain with a check per record; verified once all are ok.',
        params: domainParams,
        response: { 200: domain },
      },
    },
    async (request) => verifyDomain(ctx, actorOf(request), request.params.domain),
  );
  r.delete(
    '/api/email/domains/:domain',
    {
      schema: {
        operationId: 'deleteEmailDomain',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'DOMAIN_IN_USE'],
        tags,
        summary: 'Remove a custom domain and its DKIM key (204). 422 DOMAIN_IN_USE while active identities use it.',
        params: domainParams,
        response: { 204: z.undefined().describe('Deleted.') },
      },
    },
    async (request, reply) => {
      await deleteDomain(ctx, actorOf(request), request.params.domain);
      return reply.status(204).send();
    },
  );
}

z.globalRegistry.add(domain, { id: 'EmailDomain', description: 'A mail domain and the DNS records it needs.' });
z.globalRegistry.add(dnsRecord, { id: 'DnsRecord', description: 'One DNS record to publish (MX or TXT).' });
z.globalRegistry.add(recordCheck, { id: 'DnsRecordCheck', description: 'What the resolver answered for a record.' });
z.globalRegistry.add(addDomainInput, { id: 'EmailDomainCreate' });
