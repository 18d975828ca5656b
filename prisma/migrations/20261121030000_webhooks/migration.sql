-- Webhooks area: webhooks (secret encrypted at rest), the delivery outbox claimed by the dispatcher, attempts.

CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "active" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "secret_key_id" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "previous_secret_ciphertext" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhooks_account_id_idx" ON "webhooks"("account_id");

CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "webhook_id" TEXT NOT NULL REFERENCES "webhooks"("id") ON DELETE CASCADE,
    "event_id" BIGINT,
    "event_type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "response_code" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "locked_until" TIMESTAMPTZ(3),
    "locked_by" TEXT,
    "redelivery_of" TEXT,
    "redelivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");
CREATE INDEX "webhook_deliveries_account_id_idx" ON "webhook_deliveries"("account_id");

CREATE TABLE "webhook_delivery_attempts" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE,
    "attempt" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "response_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    CONSTRAINT "webhook_delivery_attempts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_delivery_attempts_delivery_id_started_at_idx" ON "webhook_delivery_attempts"("delivery_id", "started_at");
