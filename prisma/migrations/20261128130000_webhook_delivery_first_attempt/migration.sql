-- Issue 24 round 12 (webhooks end to end; docs/performance.md "Issue 24, round 12: webhooks end to end"): a
-- delivery's FIRST attempt is recorded in the delivery's own row instead of a `webhook_delivery_attempts` row.
--
-- Nearly every delivery is delivered by its first attempt. Its outcome statement already updates the delivery row
-- (status, attempts, response code, lease); it also inserted one attempt row, which cost PostgreSQL a heap tuple, two
-- index entries (primary key and `(delivery_id, started_at)`), the foreign-key trigger's probe and KEY SHARE lock of
-- the delivery, and their WAL, per event. The four columns below hold attempt 1 (when it started, the receiver's
-- code, the error, how long it took); NULL `first_attempt_at` means attempt 1 is not in the row (not yet made, made
-- before this migration, or recorded as a lost try), and then it is in `webhook_delivery_attempts` as before.
-- Attempts 2 and later, and lost tries, stay rows there. A delivery's attempt history (REST and GraphQL
-- `attemptHistory`) is the union of the two, so every read shows what it showed before. Adding nullable columns
-- without a default rewrites nothing.
ALTER TABLE "webhook_deliveries"
  ADD COLUMN "first_attempt_at" TIMESTAMPTZ(3),
  ADD COLUMN "first_attempt_code" INTEGER,
  ADD COLUMN "first_attempt_error" TEXT,
  ADD COLUMN "first_attempt_ms" INTEGER;
