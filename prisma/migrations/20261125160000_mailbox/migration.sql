-- Mailbox (issue 21): cc/bcc/reply-to/html/extracted text/labels/size on messages, the raw message stored once
-- in chunks (email_blobs + email_blob_chunks, streamed in and out with bounded memory), and attachment metadata
-- (bytes are read from the raw message on download, never stored twice). Defensive: another branch may add
-- `labels` (issue 20) too.

ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "cc_addresses" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "bcc_addresses" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "reply_to" TEXT;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "html" TEXT;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "extracted_text" TEXT;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "labels" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "size" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "email_messages" ADD COLUMN IF NOT EXISTS "raw_blob_id" TEXT;
CREATE INDEX IF NOT EXISTS "email_messages_raw_blob_id_idx" ON "email_messages"("raw_blob_id");

CREATE TABLE IF NOT EXISTS "email_blobs" (
    "id" TEXT NOT NULL,
    "size" INTEGER NOT NULL DEFAULT 0,
    "chunks" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_blobs_pkey" PRIMARY KEY ("id")
);

CREATE TABLE IF NOT EXISTS "email_blob_chunks" (
    "blob_id" TEXT NOT NULL REFERENCES "email_blobs"("id") ON DELETE CASCADE,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    CONSTRAINT "email_blob_chunks_pkey" PRIMARY KEY ("blob_id", "seq")
);

CREATE TABLE IF NOT EXISTS "email_attachments" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "message_row_id" TEXT NOT NULL REFERENCES "email_messages"("id") ON DELETE CASCADE,
    "position" INTEGER NOT NULL,
    "filename" TEXT,
    "content_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "inline" BOOLEAN NOT NULL DEFAULT false,
    "content_id" TEXT,
    CONSTRAINT "email_attachments_pkey" PRIMARY KEY ("id")
);
CREATE INDEX IF NOT EXISTS "email_attachments_message_row_id_position_idx" ON "email_attachments"("message_row_id", "position");

-- Suppression list (issue 21 item 5): addresses that bounced permanently; sending to one answers 422.
CREATE TABLE IF NOT EXISTS "email_suppressions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "address" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "status" TEXT,
    "diagnostic_code" TEXT,
    "message_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_suppressions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX IF NOT EXISTS "email_suppressions_account_id_address_key" ON "email_suppressions"("account_id", "address");
CREATE INDEX IF NOT EXISTS "email_suppressions_account_id_created_at_id_idx" ON "email_suppressions"("account_id", "created_at" DESC, "id" DESC);

-- Labels on threads (issue 21 item 4): the labels of its messages merged in, plus those set on the thread.
ALTER TABLE "email_threads" ADD COLUMN IF NOT EXISTS "labels" TEXT[] NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS "email_threads_labels_idx" ON "email_threads" USING GIN ("labels");

-- Block list (issue 21 item 4): addresses or domains refused inbound (550 5.7.1) or outbound (422).
CREATE TABLE IF NOT EXISTS "email_blocklist" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "entry" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "identity_id" TEXT REFERENCES "email_identities"("id") ON DELETE CASCADE,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_blocklist_pkey" PRIMARY KEY ("id")
);
CREATE INDEX IF NOT EXISTS "email_blocklist_account_id_direction_entry_idx" ON "email_blocklist"("account_id", "direction", "entry");
