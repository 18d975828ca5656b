-- Events area: retention watermark per account (see prisma/schema/events.prisma).

CREATE TABLE "event_retention_marks" (
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "pruned_through_id" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "event_retention_marks_pkey" PRIMARY KEY ("account_id")
);
