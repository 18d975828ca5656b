-- The operator mailbox (issue 26; prisma/schema/operator.prisma): postmaster@ and abuse@ of every hosted domain.
CREATE TABLE IF NOT EXISTS "operator_messages" (
  "id" TEXT PRIMARY KEY NOT NULL,
  "recipient" TEXT NOT NULL,
  "message_id" TEXT NOT NULL,
  "mail_from" TEXT NOT NULL,
  "from_address" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "remote_address" TEXT NOT NULL,
  "received_at" TIMESTAMPTZ(3) NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS "operator_messages_recipient_message_id_key"
  ON "operator_messages" ("recipient", "message_id");
