-- TCR adapter (docs/compliance.md "TCR adapter"). Outbox of CSP API calls: the domain's transaction writes a row,
-- the `tcr-submission` job (src/infra/jobs) makes the HTTP call outside any transaction, with retries.
CREATE TABLE "compliance_tcr_submissions" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "account_id" TEXT NOT NULL,
  "op" TEXT NOT NULL,
  "brand_id" TEXT,
  "vetting_id" TEXT,
  "campaign_id" TEXT,
  "payload" JSONB NOT NULL DEFAULT '{}',
  "status" TEXT NOT NULL DEFAULT 'pending',
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
  "last_error" TEXT,
  "response_code" INTEGER,
  "locked_by" TEXT,
  "locked_until" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  "completed_at" TIMESTAMPTZ(3)
);
CREATE INDEX "compliance_tcr_submissions_due_idx" ON "compliance_tcr_submissions" ("status", "next_attempt_at");
CREATE INDEX "compliance_tcr_submissions_brand_idx" ON "compliance_tcr_submissions" ("brand_id");
CREATE INDEX "compliance_tcr_submissions_campaign_idx" ON "compliance_tcr_submissions" ("campaign_id");

-- Our id ↔ TCR's id (brand `B…`, campaign `C…`, vetting), written when TCR answers a registration.
CREATE TABLE "compliance_tcr_refs" (
  "entity" TEXT NOT NULL,
  "local_id" TEXT NOT NULL,
  "tcr_id" TEXT NOT NULL,
  "account_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  PRIMARY KEY ("entity", "local_id")
);
CREATE UNIQUE INDEX "compliance_tcr_refs_tcr_id_key" ON "compliance_tcr_refs" ("entity", "tcr_id");
