-- The DID lifecycle (warm-up and cool-down ends) runs on the one job queue (src/infra/jobs; docs/jobs.md) like every
-- other kind of durable work: each number row is its own job, due at state_due_at, claimed with a lease and a token.
ALTER TABLE "compliance_numbers" ADD COLUMN "locked_by" TEXT, ADD COLUMN "locked_until" TIMESTAMPTZ(3);
