-- Role mail of custom domains (issue 26; prisma/schema/role-mail.prisma): postmaster@ and abuse@ of an account's
-- verified custom domain, kept for the account that owns the domain.
CREATE TABLE IF NOT EXISTS "account_role_messages" (
  "id" TEXT PRIMARY KEY NOT NULL,
  "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
  "recipient" TEXT NOT NULL,
  "message_id" TEXT NOT NULL,
  "mail_from" TEXT NOT NULL,
  "from_address" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "remote_address" TEXT NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS "account_role_messages_account_id_recipient_message_id_key"
  ON "account_role_messages" ("account_id", "recipient", "message_id");
CREATE INDEX IF NOT EXISTS "account_role_messages_account_id_id_idx" ON "account_role_messages" ("account_id", "id");
