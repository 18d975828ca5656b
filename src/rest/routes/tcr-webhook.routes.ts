import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { UnauthenticatedError } from '../../domain/errors.js';
import { applyTcrEvent, type TcrEventOutcome, tcrEventSchema } from '../../infra/registry/tcr/tcr-events.js';
import { TcrRegistry } from '../../infra/registry/tcr/tcr-registry.js';

/** Header carrying the shared secret of the inbound TCR webhook (TCR_WEBHOOK_SECRET). */
export const TCR_SECRET_HEADER = 'x-tcr-webhook-secret';

/** Most events accepted in one delivery (a JSON array). */
const MAX_EVENTS = 100;

const digest = (v: string) => createHash('sha256').update(v).digest();

/** Constant-time comparison of the presented secret with the configured one (both hashed to equal length). */
function secretMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * `POST /compliance/registry/tcr/webhook` (REGISTRY=tcr only): TCR's event notifications (BRAND_*, CAMPAIGN_*,
 * MNO_CAMPAIGN_OPERATION_*, EVP_REPORT_*), one event object or an array of up to 100, authenticated by the shared
 * secret in `X-TCR-Webhook-Secret` (no API key). Each event is mapped onto our brands, vettings and carriers
 * (tcr-events.ts; docs/compliance.md "TCR adapter") and the answer lists each event's outcome. A wrong or missing
 * secret is 401 UNAUTHENTICATED; a body that is not events is 400 VALIDATION_FAILED; neither changes anything.
 */
export async function tcrWebhookRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const registry = ctx.registry;
  const secret = ctx.config.TCR_WEBHOOK_SECRET;
  if (!(registry instanceof TcrRegistry) || !secret) return;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const outcome = z.object({
    eventType: z.string(),
    outcome: z.enum(['applied', 'unchanged', 'ignored', 'unknown', 'queued']),
    detail: z.string().optional(),
  });
  r.post(
    '/compliance/registry/tcr/webhook',
    {
      config: { public: true },
      // The secret is checked before the body is validated, so an unauthenticated caller learns nothing.
      preValidation: async (request) => {
        if (!secretMatches(request.headers[TCR_SECRET_HEADER], secret)) {
          throw new UnauthenticatedError(`A valid TCR webhook secret is required in "X-TCR-Webhook-Secret".`);
        }
      },
      schema: {
        tags: ['compliance'],
        summary: 'Inbound TCR webhook: registry events mapped onto brands, vettings and carrier statuses.',
        security: [],
        body: z.union([tcrEventSchema, z.array(tcrEventSchema).min(1).max(MAX_EVENTS)]),
        response: { 200: z.object({ results: z.array(outcome) }) },
      },
    },
    async (request) => {
      const events = Array.isArray(request.body) ? request.body : [request.body];
      const results: TcrEventOutcome[] = [];
      for (const event of events) {
        const result = await applyTcrEvent(ctx, event, (campaignId) =>
          ctx.events.transaction(async (tx) => {
            const campaign = await tx.campaign.findUnique({ where: { id: campaignId } });
            if (campaign) {
              await registry.enqueue(tx, { accountId: campaign.accountId, op: 'OPERATION_STATUS_SYNC', campaignId });
            }
          }),
        );
        if (result.outcome === 'unknown' || result.outcome === 'ignored') {
          request.log.info({ tcrEvent: event.eventType, ...result }, 'TCR event not applied');
        }
        results.push(result);
      }
      return { results };
    },
  );
}
