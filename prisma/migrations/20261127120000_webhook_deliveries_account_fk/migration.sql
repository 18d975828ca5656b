-- Issue 24 (webhooks end to end; docs/performance.md, "Event appends: what PostgreSQL does per event"): what each
-- delivery row written by an event's append costs PostgreSQL.
--
-- 1. `webhook_deliveries.account_id` referenced `accounts` directly, and `webhook_id` references `webhooks`, whose
--    `account_id` references `accounts`; both ON DELETE CASCADE. The first check adds nothing the second chain does
--    not give: a delivery's webhook exists, that webhook's account exists, and deleting an account deletes its
--    webhooks and, through them, their deliveries. It cost one trigger call per delivery row (a probe of `accounts`
--    and a KEY SHARE lock of the account's row). The delivery's `account_id` is still written by the fan-out from
--    the event's account (the same account as the webhook's; neither constraint ever checked that they match).
-- 2. `webhook_deliveries_account_id_idx` then has no reader: every query of deliveries by account also names the
--    delivery's id (primary key) or its webhook (`webhook_id, created_at`), the claim's per-account limit is kept in
--    memory, and the account cascade reaches deliveries through `webhook_id`. Each delivery row wrote an entry (and
--    a WAL record) into it.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_account_id_fkey";
DROP INDEX "webhook_deliveries_account_id_idx";
