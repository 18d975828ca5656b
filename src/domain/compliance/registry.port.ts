import type { Tx } from '../kernel/db.js';
import type { BrandRecord as Brand, SqlFragment, VettingRecord as Vetting } from './brand.store.js';
import type { CampaignRecord as Campaign } from './campaign.store.js';
import type { FeedbackCategory } from './compliance.enums.js';

/** A registry feedback item (TCR brand feedback category). */
export interface FeedbackItem {
  id: FeedbackCategory;
  displayName: string;
  description: string;
  fields: string[];
}

/**
 * The campaign registry port (ARCHITECTURE.md "Outside systems sit behind ports"): what the domain asks of TCR (or a
 * CPaaS in front of it). Every call runs inside the domain's transaction, so a submission and the change that
 * caused it commit together. Decisions come back later through the functions of registry.decisions.ts, which the
 * adapter calls (the sandbox from its worker; a real adapter would from the registry's webhooks). The app's adapter is
 * `ctx.registry` (src/app.ts chooses it; the sandbox simulator is in src/infra/registry/).
 */
export interface CampaignRegistry {
  readonly name: string;
  /** Submits a brand's identity for verification (registration, identity update, revet); replaces a pending one. */
  submitBrand(tx: Tx, brand: Brand): Promise<void>;
  /**
   * The submission of a NEW brand as data-modifying SQL for a single-statement write (EventLog.write: each change
   * writes only where `WRITE_OK` holds). Optional: without it the brand is registered in an interactive transaction
   * through {@link submitBrand}.
   */
  submitNewBrandChanges?(brand: Brand): SqlFragment[];
  /** Orders an external vetting of a brand. */
  submitVetting(tx: Tx, vetting: Vetting, brand: Brand): Promise<void>;
  /**
   * Submits a campaign to carrier review for `networkIds` (new campaign or re-review after an update).
   * @returns when each carrier is expected to decide.
   */
  submitCampaign(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>>;
  /** Asks pending carriers to review sooner (nudge REVIEW). @returns the new expected decision times. */
  nudgeReview(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>>;
  /** Appeals rejections: the carriers review again. @returns the expected decision times. */
  appealRejection(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>>;
  /** Expedited review (may incur fees at a real registry). @returns the new expected decision times. */
  expedite(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>>;
  /** Withdraws everything pending for a brand (deletion) and for its vettings. */
  withdrawBrand(tx: Tx, brandId: string): Promise<void>;
  /** Withdraws everything pending for a campaign (deletion). */
  withdrawCampaign(tx: Tx, campaignId: string): Promise<void>;
}
