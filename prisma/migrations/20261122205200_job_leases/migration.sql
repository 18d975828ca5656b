-- One job queue (src/infra/jobs; docs/jobs.md): every kind of durable work is claimed with a lease and a fencing
-- token, as webhook deliveries already were. Outbound mail, agent jobs and registry tasks get the same two columns.
ALTER TABLE "email_messages" ADD COLUMN "locked_by" TEXT, ADD COLUMN "locked_until" TIMESTAMPTZ(3);
ALTER TABLE "email_agent_jobs" ADD COLUMN "locked_by" TEXT, ADD COLUMN "locked_until" TIMESTAMPTZ(3);
ALTER TABLE "compliance_registry_tasks" ADD COLUMN "locked_by" TEXT, ADD COLUMN "locked_until" TIMESTAMPTZ(3);
