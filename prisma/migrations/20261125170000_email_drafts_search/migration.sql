-- Drafts, scheduled send and the agent's draft mode (issue 21 item 3), and full-text search over messages
-- (issue 21 item 4).

-- send (default: the agent's answers go out) | draft (they become drafts a person reviews and sends).
ALTER TABLE "email_identities" ADD COLUMN IF NOT EXISTS "reply_mode" TEXT NOT NULL DEFAULT 'send';

CREATE TABLE IF NOT EXISTS "email_drafts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL REFERENCES "email_identities"("id") ON DELETE CASCADE,
    "thread_id" TEXT REFERENCES "email_threads"("id") ON DELETE CASCADE,
    "to_addresses" TEXT[] NOT NULL DEFAULT '{}',
    "cc_addresses" TEXT[] NOT NULL DEFAULT '{}',
    "bcc_addresses" TEXT[] NOT NULL DEFAULT '{}',
    "reply_to" TEXT,
    "subject" TEXT NOT NULL DEFAULT '',
    "body" TEXT,
    "html" TEXT,
    "labels" TEXT[] NOT NULL DEFAULT '{}',
    "in_reply_to" TEXT,
    "references" TEXT[] NOT NULL DEFAULT '{}',
    "send_at" TIMESTAMPTZ(3),
    "created_by" TEXT NOT NULL,
    "review_reason" TEXT,
    "last_error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "locked_by" TEXT,
    "locked_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_drafts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX IF NOT EXISTS "email_drafts_identity_id_created_at_id_idx" ON "email_drafts"("identity_id", "created_at" DESC, "id" DESC);
CREATE INDEX IF NOT EXISTS "email_drafts_send_at_idx" ON "email_drafts"("send_at");

CREATE TABLE IF NOT EXISTS "email_draft_attachments" (
    "id" TEXT NOT NULL,
    "draft_id" TEXT NOT NULL REFERENCES "email_drafts"("id") ON DELETE CASCADE,
    "position" INTEGER NOT NULL,
    "filename" TEXT,
    "content_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "blob_id" TEXT NOT NULL,
    CONSTRAINT "email_draft_attachments_pkey" PRIMARY KEY ("id")
);
CREATE INDEX IF NOT EXISTS "email_draft_attachments_draft_id_position_idx" ON "email_draft_attachments"("draft_id", "position");
CREATE INDEX IF NOT EXISTS "email_draft_attachments_blob_id_idx" ON "email_draft_attachments"("blob_id");

-- Full-text search: one tsvector per message over subject (weight A), addresses (B) and the text body (C), kept by
-- PostgreSQL itself as a generated column and indexed with GIN. Words are stemmed with `english` and also kept
-- as written (`simple`), so "invoices" finds "invoice" and a name in any language still matches; addresses are
-- indexed whole, by domain, and split at @ . + _ - so "alice" or "example.com" find alice@example.com. Only the first 200 000
-- characters of a body are indexed (a tsvector holds at most 1 MiB). The function is IMMUTABLE (fixed
-- configurations), as a generated column requires.
CREATE OR REPLACE FUNCTION "email_message_search_vector"(subject TEXT, body TEXT, from_address TEXT, to_addresses TEXT[], cc_addresses TEXT[])
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('english', coalesce(subject, '')), 'A')
      || setweight(to_tsvector('simple', coalesce(subject, '')), 'A')
      || setweight(to_tsvector('simple',
           coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
           array_to_string(coalesce(cc_addresses, '{}'), ' ') || ' ' ||
           regexp_replace(coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
             array_to_string(coalesce(cc_addresses, '{}'), ' '), '[@.+_-]', ' ', 'g') || ' ' ||
           regexp_replace(coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
             array_to_string(coalesce(cc_addresses, '{}'), ' '), '[^ ]*@', '', 'g')), 'B')
      || setweight(to_tsvector('english', left(coalesce(body, ''), 200000)), 'C')
      || setweight(to_tsvector('simple', left(coalesce(body, ''), 200000)), 'C')
$$;

ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "search_vector" tsvector
  GENERATED ALWAYS AS ("email_message_search_vector"("subject", "body", "from_address", "to_addresses", "cc_addresses")) STORED;
CREATE INDEX IF NOT EXISTS "email_messages_search_vector_idx" ON "email_messages" USING GIN ("search_vector");
