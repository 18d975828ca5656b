import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  allBrands,
  applyForVetting,
  deleteBrand,
  getBrand,
  getBrandFeedback,
  listBrands,
  listVettings,
  qualifyBrand,
  qualifyQuery,
  registerBrand,
  revetBrand,
  updateBrand,
} from '../../domain/compliance/brand.service.js';
import {
  allCampaigns,
  createCampaign,
  deleteCampaign,
  expediteCampaign,
  getCampaign,
  getCampaignCarriers,
  listCampaigns,
  nudgeCampaign,
  updateCampaign,
} from '../../domain/compliance/campaign.service.js';
import { lintCampaign, lintCampaignUpdate } from '../../domain/compliance/campaign-lint.service.js';
import {
  brandShape,
  campaignShape,
  carrierShape,
  isoTimestamp,
  numberShape,
  numberStateShape,
  TIER_DESCRIPTION,
  vettingShape,
} from '../../domain/compliance/compliance.dto.js';
import {
  brandInput,
  brandListQuery,
  brandUpdateInput,
  campaignInput,
  campaignListQuery,
  campaignUpdateInput,
  didMappingQuery,
  dryRunQuery,
  nudgeInput,
  numbersInput,
  pageQuery,
  vettingApplyInput,
} from '../../domain/compliance/compliance.schemas.js';
import { brandHistory, campaignHistory, historyQuery } from '../../domain/compliance/history.service.js';
import {
  assignNumbers,
  didMapping,
  getEnum,
  listNumbers,
  pageCampaignNumbers,
  provisionNumbers,
  releaseNumber,
  removeNumbers,
} from '../../domain/compliance/number.service.js';
import { idParams } from '../../domain/validation.js';
import { actorOf } from '../auth.js';
import { sendJsonList } from '../stream-json.js';

// The response shapes of brands, vettings, carriers, campaigns and numbers are declared once in the domain
// (compliance.dto.ts); the routes use them as they are.
const ts = isoTimestamp;
const tierDescription = TIER_DESCRIPTION;
const brandOut = brandShape;
const vettingOut = vettingShape;
const carrierOut = carrierShape;
const campaignOut = campaignShape;
const lifecycleOut = numberStateShape;
const numberOut = numberShape;
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
  throughputTier: z.string().describe(tierDescription),
  usecases: z.array(
    z.object({
      usecase: z.string(),
      usecaseClass: z.string().describe('STANDARD or SPECIAL'),
      qualifies: z.boolean(),
      reason: z.string().nullable(),
      vettingRequired: z.boolean(),
      minSubUsecases: z.number(),
      maxSubUsecases: z.number(),
      messageRequirements: z.object({
        optinMessage: z.array(z.string()),
        optoutMessage: z.array(z.string()),
        helpMessage: z.array(z.string()),
        sampleMessages: z.array(z.string()),
      }),
      carriers: z.array(
        z.object({
          networkId: z.number(),
          carrier: z.string(),
          qualifies: z.boolean(),
          carrierReviewRequired: z.boolean(),
          minMsgSamples: z.number(),
          subscriberOptInRequired: z.boolean(),
          subscriberOptOutRequired: z.boolean(),
          subscriberHelpRequired: z.boolean(),
          embeddedLinksAllowed: z.boolean(),
          embeddedPhoneAllowed: z.boolean(),
          dailyCap: z.number().nullable(),
          messagesPerMinute: z.number().nullable(),
          messageClass: z.string().nullable(),
        }),
      ),
    }),
  ),
});
const lintReportOut = z.object({
  passes: z.boolean().describe('No error finding: every carrier would approve'),
  errorCount: z.number(),
  warningCount: z.number(),
  findings: z.array(
    z.object({
      code: z.string(),
      severity: z.string().describe('error or warning'),
      field: z.string(),
      message: z.string(),
      fix: z.string(),
      networkIds: z.array(z.number()).describe('Carriers that reject for it'),
    }),
  ),
  carriers: z.array(
    z.object({
      networkId: z.number(),
      carrier: z.string(),
      wouldApprove: z.boolean(),
      rejectionCode: z.string().nullable(),
      rejectionReason: z.string().nullable(),
    }),
  ),
});
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
        operationId: 'listBrands',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: brands,
        summary:
          'All brands of the account, oldest first (spec 4.1): without ?limit every brand (streamed, nextCursor ' +
          'null); with ?limit (1–200) one page, ?cursor the next.',
        querystring: brandListQuery,
        response: { 200: z.object({ brands: z.array(brandOut), nextCursor: z.string().nullable() }) },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      if (limit !== undefined) return listBrands(ctx, actorOf(request), { limit, cursor });
      const chunks = allBrands(ctx, actorOf(request), cursor);
      return sendJsonList(reply, 'brands', await chunks.next(), chunks);
    },
  );
  r.post(
    '/compliance/brands',
    {
      schema: {
        operationId: 'createBrand',
        errors: ['FORBIDDEN', 'REFERENCE_ID_TAKEN'],
        tags: brands,
        summary: 'Register a brand; answers 201 with status PENDING.',
        body: brandInput,
        response: { 201: brandOut },
      },
    },
    async (request, reply) => reply.status(201).send(await registerBrand(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/compliance/brands/:id',
    {
      schema: {
        operationId: 'getBrand',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: brands,
        summary: 'One brand with its registration status.',
        params: idParams,
        response: { 200: brandOut },
      },
    },
    (request) => getBrand(ctx, actorOf(request), request.params.id),
  );
  r.put(
    '/compliance/brands/:id',
    {
      schema: {
        operationId: 'updateBrand',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IMMUTABLE_FIELD', 'REFERENCE_ID_TAKEN'],
        tags: brands,
        summary: 'Replace a brand’s fields; identity changes send it back to PENDING (re-vetting).',
        params: idParams,
        body: brandUpdateInput,
        response: { 200: brandOut },
      },
    },
    (request) => updateBrand(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/compliance/brands/:id',
    {
      schema: {
        operationId: 'deleteBrand',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_HAS_CAMPAIGNS'],
        tags: brands,
        summary: 'Delete a brand; 409 BRAND_HAS_CAMPAIGNS while it has campaigns.',
        params: idParams,
        response: { 200: z.object({ id: z.string(), deleted: z.literal(true) }) },
      },
    },
    (request) => deleteBrand(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/brands/:id/qualify',
    {
      schema: {
        operationId: 'qualifyBrand',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: brands,
        summary:
          'Whether the brand qualifies and which use cases it may use; per use case and carrier TCR’s campaign-builder data (review, minimum samples, opt-in/opt-out/help, embedded rules, throughput). ?usecase= answers one use case.',
        params: idParams,
        querystring: qualifyQuery,
        response: { 200: qualifyOut },
      },
    },
    (request) => qualifyBrand(ctx, actorOf(request), request.params.id, request.query),
  );
  r.post(
    '/compliance/brands/:id/revet',
    {
      schema: {
        operationId: 'revetBrand',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_PENDING'],
        tags: brands,
        summary: 'Resubmit the brand to the identity check after corrections (status PENDING).',
        params: idParams,
        response: { 200: brandOut },
      },
    },
    (request) => revetBrand(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/brands/:id/feedback',
    {
      schema: {
        operationId: 'getBrandFeedback',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: brands,
        summary: 'Registry feedback: rejection reasons and required corrections.',
        params: idParams,
        response: { 200: feedbackOut },
      },
    },
    (request) => getBrandFeedback(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/brands/:id/vetting/apply',
    {
      schema: {
        operationId: 'applyForBrandVetting',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_NOT_ACTIVE'],
        tags: brands,
        summary: 'Order an external vetting (201); a pending one is returned instead (200).',
        params: idParams,
        body: vettingApplyInput.nullish(),
        response: { 200: vettingOut, 201: vettingOut },
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
        operationId: 'listBrandVettings',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: brands,
        summary: 'Vetting records of the brand, newest first.',
        params: idParams,
        response: { 200: z.array(vettingOut) },
      },
    },
    (request) => listVettings(ctx, actorOf(request), request.params.id),
  );

  r.get(
    '/compliance/campaigns',
    {
      schema: {
        operationId: 'listCampaigns',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: campaigns,
        summary:
          'All campaigns of the account (or of ?brandId), oldest first (spec 4.2): without ?limit every campaign ' +
          '(streamed, nextCursor null); with ?limit (1–200) one page, ?cursor the next.',
        querystring: campaignListQuery,
        response: { 200: z.object({ campaigns: z.array(campaignOut), nextCursor: z.string().nullable() }) },
      },
    },
    async (request, reply) => {
      if (request.query.limit !== undefined) return listCampaigns(ctx, actorOf(request), request.query);
      const chunks = allCampaigns(ctx, actorOf(request), request.query);
      return sendJsonList(reply, 'campaigns', await chunks.next(), chunks);
    },
  );
  r.post(
    '/compliance/campaigns',
    {
      schema: {
        operationId: 'createCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'BRAND_NOT_ACTIVE', 'USECASE_NOT_QUALIFIED'],
        tags: campaigns,
        summary:
          'Create a campaign under an ACTIVE brand; answers 201 with status PENDING. With ?dryRun=true: validates, then answers 200 with the lint report and writes nothing.',
        querystring: dryRunQuery,
        body: campaignInput,
        response: { 201: campaignOut, 200: lintReportOut },
      },
    },
    async (request, reply) =>
      request.query.dryRun
        ? reply.status(200).send(await lintCampaign(ctx, actorOf(request), request.body))
        : reply.status(201).send(await createCampaign(ctx, actorOf(request), request.body)),
  );
  r.post(
    '/compliance/campaigns/lint',
    {
      schema: {
        operationId: 'lintCampaign',
        errors: ['FORBIDDEN'],
        tags: campaigns,
        summary:
          'Pre-submission lint: every likely rejection cause of a campaign body (code, severity, field, message, fix, carriers), and each carrier’s predicted decision. Writes nothing.',
        body: z.record(z.string(), z.unknown()).describe('The body of POST /compliance/campaigns, complete or not.'),
        response: { 200: lintReportOut },
      },
    },
    (request) => lintCampaign(ctx, actorOf(request), request.body),
  );
  r.get(
    '/compliance/campaigns/:id',
    {
      schema: {
        operationId: 'getCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: campaigns,
        summary: 'One campaign with carrier approval, sendable and blockingReasons.',
        params: idParams,
        response: { 200: campaignOut },
      },
    },
    (request) => getCampaign(ctx, actorOf(request), request.params.id),
  );
  r.put(
    '/compliance/campaigns/:id',
    {
      schema: {
        operationId: 'updateCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IMMUTABLE_FIELD'],
        tags: campaigns,
        summary:
          'Change campaign details; content changes trigger carrier re-review. With ?dryRun=true: answers the lint report of the campaign as updated and writes nothing.',
        params: idParams,
        querystring: dryRunQuery,
        body: campaignUpdateInput,
        response: { 200: z.union([campaignOut, lintReportOut]) },
      },
    },
    (request) =>
      request.query.dryRun
        ? lintCampaignUpdate(ctx, actorOf(request), request.params.id, request.body)
        : updateCampaign(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/compliance/campaigns/:id',
    {
      schema: {
        operationId: 'deleteCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: campaigns,
        summary: 'Delete a campaign and unlink its numbers.',
        params: idParams,
        response: {
          200: z.object({ id: z.string(), deleted: z.literal(true), unlinkedNumbers: z.array(z.string()) }),
        },
      },
    },
    (request) => deleteCampaign(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/compliance/campaigns/:id/nudge',
    {
      schema: {
        operationId: 'nudgeCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NOTHING_TO_NUDGE', 'NOTHING_TO_APPEAL'],
        tags: campaigns,
        summary:
          'Nudge carrier review (REVIEW, also what no body means: spec 4.2) or appeal rejections (APPEAL_REJECTION).',
        params: idParams,
        body: nudgeInput.nullish(),
        response: { 200: campaignOut },
      },
    },
    (request) => nudgeCampaign(ctx, actorOf(request), request.params.id, request.body),
  );
  r.post(
    '/compliance/campaigns/:id/expedite',
    {
      schema: {
        operationId: 'expediteCampaign',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NOTHING_TO_EXPEDITE'],
        tags: campaigns,
        summary: 'Request expedited carrier review of every pending carrier.',
        params: idParams,
        response: { 200: campaignOut },
      },
    },
    (request) => expediteCampaign(ctx, actorOf(request), request.params.id),
  );
  r.get(
    '/compliance/campaigns/:id/numbers',
    {
      schema: {
        operationId: 'listCampaignNumbers',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags: campaigns,
        summary:
          'Numbers currently assigned to the campaign, ascending; limit 1–200 (default 50); nextCursor null on the ' +
          'last page.',
        params: idParams,
        querystring: pageQuery,
        response: {
          200: z.object({
            campaignId: z.string(),
            numbers: z.array(z.object({ number: z.string(), assignedAt: ts, ...lifecycleOut })),
            nextCursor: z.string().nullable(),
          }),
        },
      },
    },
    (request) => pageCampaignNumbers(ctx, actorOf(request), request.params.id, request.query),
  );
  r.post(
    '/compliance/campaigns/:id/numbers/assign',
    {
      schema: {
        operationId: 'assignCampaignNumbers',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBER_ASSIGNED_ELSEWHERE', 'NUMBERS_NOT_PROVISIONED', 'NUMBER_COOLING'],
        tags: campaigns,
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
      },
    },
    (request) => assignNumbers(ctx, actorOf(request), request.params.id, request.body),
  );
  r.post(
    '/compliance/campaigns/:id/numbers/remove',
    {
      schema: {
        operationId: 'removeCampaignNumbers',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBERS_NOT_ASSIGNED'],
        tags: campaigns,
        summary: 'Unlink numbers from the campaign, all or nothing.',
        params: idParams,
        body: numbersInput,
        response: {
          200: z.object({ campaignId: z.string(), removed: z.array(z.string()), numbers: z.array(z.string()) }),
        },
      },
    },
    (request) => removeNumbers(ctx, actorOf(request), request.params.id, request.body),
  );
  r.get(
    '/compliance/campaigns/:id/carriers',
    {
      schema: {
        operationId: 'getCampaignCarriers',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: campaigns,
        summary: 'Per-carrier approval of the campaign.',
        params: idParams,
        response: { 200: z.object({ campaignId: z.string(), carriers: z.array(carrierOut) }) },
      },
    },
    (request) => getCampaignCarriers(ctx, actorOf(request), request.params.id),
  );

  const transitionOut = z.object({
    eventId: z.string().describe('Event log id (the SSE id)'),
    at: ts,
    field: z.string().describe('status, identityStatus or carrierStatus'),
    from: z.string().nullable(),
    to: z.string(),
    cause: z.string(),
    carrier: z.object({ networkId: z.number(), name: z.string() }).nullable(),
    reason: z.string().nullable(),
    code: z.string().nullable(),
  });
  r.get(
    '/compliance/brands/:id/history',
    {
      schema: {
        operationId: 'getBrandHistory',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags: brands,
        summary: 'The brand’s status and identity transitions (from, to, cause, at), oldest first, from the event log.',
        params: idParams,
        querystring: historyQuery,
        response: {
          200: z.object({
            brandId: z.string(),
            transitions: z.array(transitionOut),
            nextCursor: z.string().nullable(),
          }),
        },
      },
    },
    (request) => brandHistory(ctx, actorOf(request), request.params.id, request.query),
  );
  r.get(
    '/compliance/campaigns/:id/history',
    {
      schema: {
        operationId: 'getCampaignHistory',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags: campaigns,
        summary:
          'The campaign’s status and per-carrier transitions (from, to, cause, carrier, reason, at), oldest first, from the event log.',
        params: idParams,
        querystring: historyQuery,
        response: {
          200: z.object({
            campaignId: z.string(),
            transitions: z.array(transitionOut),
            nextCursor: z.string().nullable(),
          }),
        },
      },
    },
    (request) => campaignHistory(ctx, actorOf(request), request.params.id, request.query),
  );

  r.get(
    '/compliance/did-mapping',
    {
      schema: {
        operationId: 'getDidMapping',
        responseHeaders: {
          200: {
            'x-next-cursor': {
              type: 'string',
              description: 'Cursor of the next page (pass it as `cursor`); absent on the last page.',
            },
          },
        },
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: numbers,
        summary: 'Every number with its campaign (null when unassigned); next page cursor in x-next-cursor.',
        querystring: didMappingQuery,
        response: {
          200: z.array(
            z.object({
              number: z.string(),
              campaignId: z.string().nullable(),
              campaignStatus: z.string().nullable(),
              state: lifecycleOut.state,
              assignmentStatus: lifecycleOut.assignmentStatus,
            }),
          ),
        },
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
        operationId: 'getComplianceEnum',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: ['compliance: enums'],
        summary: 'Values of the vertical, entityType or usecase enum.',
        params: z.object({ name: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be an enum name') }),
        response: { 200: z.object({ name: z.string(), values: z.array(z.string()) }) },
      },
    },
    async (request) => getEnum(actorOf(request), request.params.name),
  );

  r.post(
    '/api/numbers',
    {
      schema: {
        operationId: 'provisionNumbers',
        errors: ['FORBIDDEN', 'NUMBER_UNAVAILABLE'],
        tags: numbers,
        summary: 'Provision E.164 numbers in the account (201), all or nothing.',
        body: numbersInput,
        response: { 201: z.object({ numbers: z.array(numberOut) }) },
      },
    },
    async (request, reply) => reply.status(201).send(await provisionNumbers(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/numbers',
    {
      schema: {
        operationId: 'listNumbers',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: numbers,
        summary: 'Provisioned numbers, ascending, paged by ?limit&cursor.',
        querystring: pageQuery,
        response: { 200: z.object({ numbers: z.array(numberOut), nextCursor: z.string().nullable() }) },
      },
    },
    (request) => listNumbers(ctx, actorOf(request), request.query),
  );
  r.delete(
    '/api/numbers/:number',
    {
      schema: {
        operationId: 'releaseNumber',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'NUMBER_ASSIGNED'],
        tags: numbers,
        summary: 'Release a number; 409 NUMBER_ASSIGNED while it is assigned to a campaign.',
        params: z.object({ number: z.string().regex(/^\+?\d{1,20}$/, 'must be a phone number in E.164 format') }),
        response: { 200: z.object({ number: z.string(), released: z.literal(true) }) },
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
// Request bodies, named where they are used (the domain declares them; the document shows them as `<Name>`).
z.globalRegistry.add(brandInput, { id: 'BrandCreate' });
z.globalRegistry.add(brandUpdateInput, { id: 'BrandUpdate' });
z.globalRegistry.add(campaignInput, { id: 'CampaignCreate' });
z.globalRegistry.add(campaignUpdateInput, { id: 'CampaignUpdate' });
z.globalRegistry.add(nudgeInput, { id: 'CampaignNudge' });
z.globalRegistry.add(vettingApplyInput, { id: 'VettingApply' });
z.globalRegistry.add(numbersInput, { id: 'NumberSet' });
