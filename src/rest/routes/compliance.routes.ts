import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  applyForVetting,
  deleteBrand,
  getBrand,
  getBrandFeedback,
  listBrands,
  listVettings,
  qualifyBrand,
  registerBrand,
  revetBrand,
  updateBrand,
} from '../../domain/compliance/brand.service.js';
import {
  createCampaign,
  deleteCampaign,
  expediteCampaign,
  getCampaign,
  getCampaignCarriers,
  listCampaigns,
  nudgeCampaign,
  updateCampaign,
} from '../../domain/compliance/campaign.service.js';
import {
  brandInput,
  brandUpdateInput,
  campaignInput,
  campaignListQuery,
  campaignUpdateInput,
  didMappingQuery,
  nudgeInput,
  numbersInput,
  pageQuery,
  vettingApplyInput,
} from '../../domain/compliance/compliance.schemas.js';
import {
  assignNumbers,
  didMapping,
  getEnum,
  listCampaignNumbers,
  listNumbers,
  provisionNumbers,
  releaseNumber,
  removeNumbers,
} from '../../domain/compliance/number.service.js';
import { actorOf } from '../auth.js';

const ts = z.string().describe('ISO 8601 UTC with milliseconds');
const brandOut = z.object({
  id: z.string(),
  name: z.string(),
  ein: z.string(),
  vertical: z.string(),
  entityType: z.string(),
  country: z.string(),
  website: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  stockSymbol: z.string().nullable(),
  stockExchange: z.string().nullable(),
  status: z.string().describe('PENDING, ACTIVE or FAILED'),
  identityStatus: z.string().describe('SELF_DECLARED, UNVERIFIED, VERIFIED or VETTED_VERIFIED'),
  createdAt: ts,
  updatedAt: ts,
});
const vettingOut = z.object({
  vettingId: z.string(),
  brandId: z.string(),
  evpId: z.string(),
  vettingClass: z.string(),
  status: z.string().describe('PENDING, APPROVED or FAILED'),
  vettingScore: z.number().nullable(),
  createdAt: ts,
  completedAt: ts.nullable(),
});
const carrierOut = z.object({
  carrier: z.string(),
  networkId: z.number(),
  status: z.string().describe('PENDING, APPROVED, REJECTED or SUSPENDED'),
  approvedAt: ts.nullable(),
  rejectionReason: z.string().nullable(),
  estimatedDecisionAt: ts.nullable(),
});
const campaignOut = z.object({
  id: z.string(),
  brandId: z.string(),
  usecase: z.string(),
  description: z.string(),
  sampleMessages: z.array(z.string()),
  subscriberOptIn: z.boolean(),
  subscriberHelp: z.boolean(),
  numberPool: z.boolean(),
  status: z.string().describe('PENDING, APPROVED, REJECTED or SUSPENDED'),
  expedited: z.boolean(),
  numberCount: z.number(),
  carriers: z.array(carrierOut),
  sendable: z.boolean(),
  blockingReasons: z.array(z.object({ code: z.string(), message: z.string(), networkId: z.number().nullable() })),
  createdAt: ts,
  updatedAt: ts,
});
const numberOut = z.object({
  number: z.string(),
  campaignId: z.string().nullable(),
  assignedAt: ts.nullable(),
  createdAt: ts,
});
const feedbackOut = z.object({
  brandId: z.string(),
  status: z.string(),
  identityStatus: z.string(),
  category: z.array(
    z.object({ id: z.string(), displayName: z.string(), description: z.string(), fields: z.array(z.string()) }),
  ),
});
const qualifyOut = z.object({
  brandId: z.string(),
  qualified: z.boolean(),
  status: z.string(),
  identityStatus: z.string(),
  usecases: z.array(
    z.object({
      usecase: z.string(),
      qualifies: z.boolean(),
      reason: z.string().nullable(),
      carriers: z.array(
        z.object({
          networkId: z.number(),
          carrier: z.string(),
          qualifies: z.boolean(),
          carrierReviewRequired: z.boolean(),
          minMsgSamples: z.number(),
          subscriberOptInRequired: z.boolean(),
          subscriberHelpRequired: z.boolean(),
          embeddedLinksAllowed: z.boolean(),
          embeddedPhoneAllowed: z.boolean(),
        }),
      ),
    }),
  ),
});
const idParams = z.object({ id: z.string().min(1) });
const brands = ['compliance: brands'];
const campaigns = ['compliance: campaigns'];
const numbers = ['compliance: numbers'];

/** REST routes of the compliance area: spec 4.1–4.3 at their exact paths, plus /api/numbers (issue 2). */
export async function complianceRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/compliance/brands',
    {
      schema: {
        tags: brands,
        operationId: 'listBrands',
        summary: 'All brands of the account, oldest first, paged by ?limit&cursor.',
        querystring: pageQuery,
        response: { 200: z.object({ brands: z.array(brandOut), nextCursor: z.string().nullable() }) },
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
      },
    },
    (request) => listBrands(ctx, actorOf(request), request.query),
  );
  r.post(
    '/compliance/brands',
    {
      schema: {
        tags: brands,
        operationId: 'createBrand',
        summary: 'Register a brand; answers 201 with status PENDING.',
        body: brandInput,
        response: { 201: brandOut },
        errors: ['FORBIDDEN'],
      },
    },
    async (request, reply) => reply.status(201).send(await registerBrand(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/compliance/brands/:id',
    {
      schema: {
        tags: brands,
        operationId: 'getBrand',
        summary: 'One brand with its registration status.',
        params: idParams,
        response: { 200: brandOut },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => getBrand(ctx, actorOf(request), request.params.id),
  );
  r.put(
    '/compliance/brands/:id',
    {
      schema: {
        tags: brands,
        operationId: 'updateBrand',
        summary: 'Replace a brand’s fields; identity changes send it back to PENDING (re-vetting).',
        params: idParams,
        body: brandUpdateInput,
        response: { 200: brandOut },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => updateBrand(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/compliance/brands/:id',
    {
      schema: {
        tags: brands,
        operationId: 'deleteBrand',
        summary: 'Delete a brand; 409 BRAND_HAS_CAMPAIGNS while it has campaigns.',
        params: idParams,
        response: { 200: z.object({ id: z.string(), deleted: z.literal(true) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_HAS_CAMPAIGNS'],
      },
    },
    (request) => deleteBrand(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/brands/:id/qualify',
    {
      schema: {
        tags: brands,
        operationId: 'qualifyBrand',
        summary: 'Whether the brand qualifies and which use cases it may use, per carrier.',
        params: idParams,
        response: { 200: qualifyOut },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => qualifyBrand(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/brands/:id/revet',
    {
      schema: {
        tags: brands,
        operationId: 'revetBrand',
        summary: 'Resubmit the brand to the identity check after corrections (status PENDING).',
        params: idParams,
        response: { 200: brandOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_PENDING'],
      },
    },
    (request) => revetBrand(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/brands/:id/feedback',
    {
      schema: {
        tags: brands,
        operationId: 'getBrandFeedback',
        summary: 'Registry feedback: rejection reasons and required corrections.',
        params: idParams,
        response: { 200: feedbackOut },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => getBrandFeedback(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/brands/:id/vetting/apply',
    {
      schema: {
        tags: brands,
        operationId: 'applyForBrandVetting',
        summary: 'Order an external vetting (201); a pending one is returned instead (200).',
        params: idParams,
        body: vettingApplyInput.nullish(),
        response: { 200: vettingOut, 201: vettingOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_NOT_ACTIVE'],
      },
    },
    async (request, reply) => {
      const { vetting, created } = await applyForVetting(ctx, actorOf(request), request.params.id, request.body);
      return reply.status(created ? 201 : 200).send(vetting);
    },
  );
  r.get(
    '/compliance/brands/:id/vettings',
    {
      schema: {
        tags: brands,
        operationId: 'listBrandVettings',
        summary: 'Vetting records of the brand, newest first.',
        params: idParams,
        response: { 200: z.array(vettingOut) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => listVettings(ctx, actorOf(request), request.params.id),
  );

  r.get(
    '/compliance/campaigns',
    {
      schema: {
        tags: campaigns,
        operationId: 'listCampaigns',
        summary: 'All campaigns of the account (or of ?brandId), oldest first, paged by ?limit&cursor.',
        querystring: campaignListQuery,
        response: { 200: z.object({ campaigns: z.array(campaignOut), nextCursor: z.string().nullable() }) },
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
      },
    },
    (request) => listCampaigns(ctx, actorOf(request), request.query),
  );
  r.post(
    '/compliance/campaigns',
    {
      schema: {
        tags: campaigns,
        operationId: 'createCampaign',
        summary: 'Create a campaign under an ACTIVE brand; answers 201 with status PENDING.',
        body: campaignInput,
        response: { 201: campaignOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_NOT_ACTIVE', 'USECASE_NOT_QUALIFIED'],
      },
    },
    async (request, reply) => reply.status(201).send(await createCampaign(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/compliance/campaigns/:id',
    {
      schema: {
        tags: campaigns,
        operationId: 'getCampaign',
        summary: 'One campaign with carrier approval, sendable and blockingReasons.',
        params: idParams,
        response: { 200: campaignOut },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => getCampaign(ctx, actorOf(request), request.params.id),
  );
  r.put(
    '/compliance/campaigns/:id',
    {
      schema: {
        tags: campaigns,
        operationId: 'updateCampaign',
        summary: 'Change campaign details; content changes trigger carrier re-review.',
        params: idParams,
        body: campaignUpdateInput,
        response: { 200: campaignOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IMMUTABLE_FIELD'],
      },
    },
    (request) => updateCampaign(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/compliance/campaigns/:id',
    {
      schema: {
        tags: campaigns,
        operationId: 'deleteCampaign',
        summary: 'Delete a campaign and unlink its numbers.',
        params: idParams,
        response: {
          200: z.object({ id: z.string(), deleted: z.literal(true), unlinkedNumbers: z.array(z.string()) }),
        },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => deleteCampaign(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/campaigns/:id/nudge',
    {
      schema: {
        tags: campaigns,
        operationId: 'nudgeCampaign',
        summary: 'Nudge carrier review (REVIEW) or appeal rejections (APPEAL_REJECTION).',
        params: idParams,
        body: nudgeInput,
        response: { 200: campaignOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NOTHING_TO_NUDGE', 'NOTHING_TO_APPEAL'],
      },
    },
    (request) => nudgeCampaign(ctx, actorOf(request), request.params.id, request.body),
  );
  r.post(
    '/compliance/campaigns/:id/expedite',
    {
      schema: {
        tags: campaigns,
        operationId: 'expediteCampaign',
        summary: 'Request expedited carrier review of every pending carrier.',
        params: idParams,
        response: { 200: campaignOut },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NOTHING_TO_EXPEDITE'],
      },
    },
    (request) => expediteCampaign(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/campaigns/:id/numbers',
    {
      schema: {
        tags: campaigns,
        operationId: 'listCampaignNumbers',
        summary: 'Numbers currently assigned to the campaign.',
        params: idParams,
        response: {
          200: z.object({ campaignId: z.string(), numbers: z.array(z.object({ number: z.string(), assignedAt: ts })) }),
        },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => listCampaignNumbers(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/campaigns/:id/numbers/assign',
    {
      schema: {
        tags: campaigns,
        operationId: 'assignCampaignNumbers',
        summary: 'Assign provisioned numbers to the campaign, all or nothing.',
        params: idParams,
        body: numbersInput,
        response: {
          200: z.object({
            campaignId: z.string(),
            assigned: z.array(z.string()),
            alreadyAssigned: z.array(z.string()),
            numbers: z.array(z.string()),
          }),
        },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBER_ASSIGNED_ELSEWHERE', 'NUMBERS_NOT_PROVISIONED'],
      },
    },
    (request) => assignNumbers(ctx, actorOf(request), request.params.id, request.body),
  );
  r.post(
    '/compliance/campaigns/:id/numbers/remove',
    {
      schema: {
        tags: campaigns,
        operationId: 'removeCampaignNumbers',
        summary: 'Unlink numbers from the campaign, all or nothing.',
        params: idParams,
        body: numbersInput,
        response: {
          200: z.object({ campaignId: z.string(), removed: z.array(z.string()), numbers: z.array(z.string()) }),
        },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBERS_NOT_ASSIGNED'],
      },
    },
    (request) => removeNumbers(ctx, actorOf(request), request.params.id, request.body),
  );
  r.get(
    '/compliance/campaigns/:id/carriers',
    {
      schema: {
        tags: campaigns,
        operationId: 'getCampaignCarriers',
        summary: 'Per-carrier approval of the campaign.',
        params: idParams,
        response: { 200: z.object({ campaignId: z.string(), carriers: z.array(carrierOut) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    (request) => getCampaignCarriers(ctx, actorOf(request), request.params.id),
  );

  r.get(
    '/compliance/did-mapping',
    {
      schema: {
        tags: numbers,
        operationId: 'getDidMapping',
        summary: 'Every number with its campaign (null when unassigned); next page cursor in x-next-cursor.',
        querystring: didMappingQuery,
        response: {
          200: z.array(
            z.object({ number: z.string(), campaignId: z.string().nullable(), campaignStatus: z.string().nullable() }),
          ),
        },
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
      },
    },
    async (request, reply) => {
      const { entries, nextCursor } = await didMapping(ctx, actorOf(request), request.query);
      if (nextCursor) reply.header('x-next-cursor', nextCursor);
      return entries;
    },
  );
  r.get(
    '/compliance/enums/:name',
    {
      schema: {
        tags: ['compliance: enums'],
        operationId: 'getComplianceEnum',
        summary: 'Values of the vertical, entityType or usecase enum.',
        params: z.object({ name: z.string() }),
        response: { 200: z.object({ name: z.string(), values: z.array(z.string()) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => getEnum(actorOf(request), request.params.name),
  );

  r.post(
    '/api/numbers',
    {
      schema: {
        tags: numbers,
        operationId: 'provisionNumbers',
        summary: 'Provision E.164 numbers in the account (201), all or nothing.',
        body: numbersInput,
        response: { 201: z.object({ numbers: z.array(numberOut) }) },
        errors: ['FORBIDDEN', 'NUMBER_UNAVAILABLE'],
      },
    },
    async (request, reply) => reply.status(201).send(await provisionNumbers(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/numbers',
    {
      schema: {
        tags: numbers,
        operationId: 'listNumbers',
        summary: 'Provisioned numbers, ascending, paged by ?limit&cursor.',
        querystring: pageQuery,
        response: { 200: z.object({ numbers: z.array(numberOut), nextCursor: z.string().nullable() }) },
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
      },
    },
    (request) => listNumbers(ctx, actorOf(request), request.query),
  );
  r.delete(
    '/api/numbers/:number',
    {
      schema: {
        tags: numbers,
        operationId: 'releaseNumber',
        summary: 'Release a number; 409 NUMBER_ASSIGNED while it is assigned to a campaign.',
        params: z.object({ number: z.string() }),
        response: { 200: z.object({ number: z.string(), released: z.literal(true) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBER_ASSIGNED'],
      },
    },
    (request) => releaseNumber(ctx, actorOf(request), request.params.number),
  );
}

// OpenAPI component names of the response shapes declared above (docs/openapi.md).
z.globalRegistry.add(brandOut, { id: 'Brand', description: 'A 10DLC brand and its registration (TCR) status.' });
z.globalRegistry.add(vettingOut, { id: 'Vetting', description: 'An external vetting of a brand.' });
z.globalRegistry.add(carrierOut, { id: 'CarrierStatus', description: 'One carrier’s (MNO’s) review of a campaign.' });
z.globalRegistry.add(campaignOut, {
  id: 'Campaign',
  description: 'A 10DLC campaign with per-carrier approval, `sendable` and `blockingReasons`.',
});
z.globalRegistry.add(numberOut, {
  id: 'PhoneNumber',
  description: 'A provisioned E.164 number (DID) and its campaign.',
});
z.globalRegistry.add(feedbackOut, { id: 'BrandFeedback', description: 'Registry feedback on a brand.' });
z.globalRegistry.add(qualifyOut, { id: 'BrandQualification', description: 'Use cases the brand qualifies for.' });
