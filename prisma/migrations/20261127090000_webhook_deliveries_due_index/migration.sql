-- Issue 24 (webhook drain): what PostgreSQL does per delivery (docs/performance.md, "Webhook drain: PostgreSQL's
-- share per delivery").
--
-- 1. The claim sets only `locked_until`, `locked_by` and `attempts`, none of them indexed, so its update can be HOT
--    (no new entry in any index) when the row's page has room for the new version. Rows are written by the fan-out
--    into packed pages (fillfactor 100), so the claim almost never found room and wrote an entry into each of the
--    table's four indexes. Half of each new page is now left free for the claim's version (and the record's). The
--    table is not larger for it: before, each row's two updates moved it to other pages; measured after draining
--    6,000 deliveries, 10.0 MB of heap with fillfactor 50 against 10.7 MB before.
-- 2. The due index covers only what can be claimed: `pending` rows, ordered as the claim orders them
--    (`next_attempt_at, id`). A delivered, failed or cancelled row (every row, eventually) has no entry in it, so
--    the record update that ends a delivery writes three index entries instead of four, and the claim, the queue's
--    due probe and its depth metric read an index of the pending rows only instead of every row ever delivered.
ALTER TABLE "webhook_deliveries" SET (fillfactor = 50);
DROP INDEX "webhook_deliveries_status_next_attempt_at_idx";
CREATE INDEX "webhook_deliveries_next_attempt_at_id_idx" ON "webhook_deliveries"("next_attempt_at", "id") WHERE "status" = 'pending';
