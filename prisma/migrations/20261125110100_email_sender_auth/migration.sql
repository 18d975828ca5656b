-- Sender authentication of inbound mail (issue 20 section 1): the SPF/DKIM/DMARC/ARC verdicts (mailauth's words)
-- and whether the sender counts as authenticated, the RFC 8601 Authentication-Results header text, and system
-- labels (`spam` for DMARC quarantine, `unauthenticated`). Another helper may add `labels` too: hence IF NOT EXISTS.
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "authentication" JSONB;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "authentication_results" TEXT;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "labels" TEXT[] NOT NULL DEFAULT '{}';

-- The per-identity answer budget counts an identity's answers in the window, whoever they went to.
CREATE INDEX IF NOT EXISTS "email_agent_jobs_identity_id_status_updated_at_idx"
    ON "email_agent_jobs"("identity_id", "status", "updated_at");
