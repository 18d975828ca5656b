-- 10DLC compliance: brands, vettings, campaigns, carrier reviews, numbers and the sandbox registry schedule.

CREATE TABLE "compliance_brands" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "name" TEXT NOT NULL,
    "ein" TEXT NOT NULL,
    "vertical" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "website" TEXT,
    "email" TEXT,
    "phone" TEXT,
    "stock_symbol" TEXT,
    "stock_exchange" TEXT,
    "status" TEXT NOT NULL,
    "identity_status" TEXT NOT NULL,
    "feedback" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compliance_brands_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "compliance_brands_account_id_id_idx" ON "compliance_brands"("account_id", "id");

CREATE TABLE "compliance_vettings" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "brand_id" TEXT NOT NULL REFERENCES "compliance_brands"("id") ON DELETE CASCADE,
    "evp_id" TEXT NOT NULL,
    "vetting_class" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "vetting_score" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "compliance_vettings_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "compliance_vettings_brand_id_created_at_idx" ON "compliance_vettings"("brand_id", "created_at");

CREATE TABLE "compliance_campaigns" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "brand_id" TEXT NOT NULL REFERENCES "compliance_brands"("id") ON DELETE RESTRICT,
    "usecase" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "sample_messages" TEXT[],
    "subscriber_opt_in" BOOLEAN NOT NULL,
    "subscriber_help" BOOLEAN NOT NULL,
    "number_pool" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "expedited" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compliance_campaigns_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "compliance_campaigns_account_id_id_idx" ON "compliance_campaigns"("account_id", "id");
CREATE INDEX "compliance_campaigns_brand_id_idx" ON "compliance_campaigns"("brand_id");

CREATE TABLE "compliance_campaign_carriers" (
    "campaign_id" TEXT NOT NULL REFERENCES "compliance_campaigns"("id") ON DELETE CASCADE,
    "network_id" INTEGER NOT NULL,
    "carrier" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "approved_at" TIMESTAMPTZ(3),
    "rejection_reason" TEXT,
    "estimated_decision_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compliance_campaign_carriers_pkey" PRIMARY KEY ("campaign_id", "network_id")
);

CREATE TABLE "compliance_numbers" (
    "number" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "campaign_id" TEXT REFERENCES "compliance_campaigns"("id") ON DELETE SET NULL,
    "assigned_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compliance_numbers_pkey" PRIMARY KEY ("number")
);
CREATE INDEX "compliance_numbers_account_id_number_idx" ON "compliance_numbers"("account_id", "number");
CREATE INDEX "compliance_numbers_campaign_id_idx" ON "compliance_numbers"("campaign_id");

CREATE TABLE "compliance_registry_tasks" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "kind" TEXT NOT NULL,
    "brand_id" TEXT,
    "vetting_id" TEXT,
    "campaign_id" TEXT,
    "network_id" INTEGER,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compliance_registry_tasks_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "compliance_registry_tasks_due_at_idx" ON "compliance_registry_tasks"("due_at");
CREATE INDEX "compliance_registry_tasks_brand_id_idx" ON "compliance_registry_tasks"("brand_id");
CREATE INDEX "compliance_registry_tasks_campaign_id_idx" ON "compliance_registry_tasks"("campaign_id");
