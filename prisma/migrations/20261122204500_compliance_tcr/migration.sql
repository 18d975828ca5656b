-- 10DLC in depth (issue 14): TCR's brand and campaign fields, per-carrier rejection codes, the brand's vetting
-- score (throughput tier) and the number lifecycle (DID state and TCR/Telnyx-style assignment status).

ALTER TABLE "compliance_brands"
    ADD COLUMN "display_name" TEXT,
    ADD COLUMN "street" TEXT,
    ADD COLUMN "city" TEXT,
    ADD COLUMN "state" TEXT,
    ADD COLUMN "postal_code" TEXT,
    ADD COLUMN "first_name" TEXT,
    ADD COLUMN "last_name" TEXT,
    ADD COLUMN "mobile_phone" TEXT,
    ADD COLUMN "brand_relationship" TEXT,
    ADD COLUMN "alt_business_id" TEXT,
    ADD COLUMN "alt_business_id_type" TEXT,
    ADD COLUMN "business_contact_email" TEXT,
    ADD COLUMN "reference_id" TEXT,
    ADD COLUMN "mock" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "vetting_score" INTEGER;
-- TCR: referenceId is unique per CSP, compared case-insensitively.
CREATE UNIQUE INDEX "compliance_brands_account_reference_id_key"
    ON "compliance_brands"("account_id", lower("reference_id")) WHERE "reference_id" IS NOT NULL;

ALTER TABLE "compliance_campaigns"
    ADD COLUMN "message_flow" TEXT,
    ADD COLUMN "help_message" TEXT,
    ADD COLUMN "optin_message" TEXT,
    ADD COLUMN "optout_message" TEXT,
    ADD COLUMN "help_keywords" TEXT,
    ADD COLUMN "optin_keywords" TEXT,
    ADD COLUMN "optout_keywords" TEXT,
    ADD COLUMN "embedded_link" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "embedded_phone" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "age_gated" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "direct_lending" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "affiliate_marketing" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "sub_usecases" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "privacy_policy_link" TEXT,
    ADD COLUMN "terms_and_conditions_link" TEXT;

ALTER TABLE "compliance_campaign_carriers" ADD COLUMN "rejection_code" TEXT;

ALTER TABLE "compliance_numbers"
    ADD COLUMN "state" TEXT NOT NULL DEFAULT 'unassigned',
    ADD COLUMN "state_changed_at" TIMESTAMPTZ(3),
    ADD COLUMN "state_due_at" TIMESTAMPTZ(3),
    ADD COLUMN "assignment_status" TEXT,
    ADD COLUMN "failure_reasons" JSONB NOT NULL DEFAULT '[]',
    ADD COLUMN "last_campaign_id" TEXT;
CREATE INDEX "compliance_numbers_state_due_at_idx" ON "compliance_numbers"("state_due_at") WHERE "state_due_at" IS NOT NULL;
