-- Issue 24 round 15 (docs/performance.md "round 15: the search vector in a side table"): a message's search vector
-- lives in its own table, `email_message_search`, instead of the column `email_messages.search_vector`.
--
-- Round 13 left the column NULL at delivery and had an indexer UPDATE it afterwards; that UPDATE writes a second
-- version of the message row (a GIN-indexed column changes, so no HOT update) with new entries in every B-tree index
-- of email_messages, which gave back most of what deferring the vector saved. The indexer now INSERTs one narrow row
-- per message here instead and never touches the message row. A search matches through this table's GIN index
-- (src/domain/email/search.store.ts: `m.id IN (SELECT message_id … WHERE search_vector @@ q)`, a bitmap index scan).
-- `email_message_search_vector` stays the one definition of the vector.
--
-- The queue of messages still to index is `email_search_pending`, filled by a statement-level AFTER INSERT trigger
-- on email_messages (one INSERT … SELECT per writing statement over its transition table, not one call per row), so
-- every writer is covered — inbound delivery, outbound send, imports, and any later one — without each writer
-- remembering it. The indexer takes queue rows FOR UPDATE SKIP LOCKED and, in one statement, deletes them and inserts
-- their vectors, so a queue row is gone only when its vector is committed. The queue has no foreign key (no check
-- per delivered message): a queue row of a deleted message is dropped by the indexer, which finds no message for it.
CREATE TABLE "email_message_search" (
    "message_id" TEXT NOT NULL REFERENCES "email_messages"("id") ON DELETE CASCADE,
    "account_id" TEXT NOT NULL,
    "search_vector" tsvector NOT NULL,
    CONSTRAINT "email_message_search_pkey" PRIMARY KEY ("message_id")
);
CREATE INDEX "email_message_search_vector_idx" ON "email_message_search" USING GIN ("search_vector");

CREATE TABLE "email_search_pending" (
    "message_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    CONSTRAINT "email_search_pending_pkey" PRIMARY KEY ("message_id")
);
CREATE INDEX "email_search_pending_account_id_message_id_idx" ON "email_search_pending" ("account_id", "message_id");

-- As 20261128120000_email_lz4_compression: lz4 where the server has it, pglz otherwise (PGlite).
DO $$
BEGIN
  ALTER TABLE "email_message_search" ALTER COLUMN "search_vector" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'PostgreSQL without lz4: email_message_search keeps pglz';
END
$$;

CREATE OR REPLACE FUNCTION "email_search_enqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "email_search_pending" ("message_id", "account_id") SELECT "id", "account_id" FROM new_messages;
  RETURN NULL;
END
$$;
CREATE TRIGGER "email_messages_search_enqueue" AFTER INSERT ON "email_messages"
  REFERENCING NEW TABLE AS new_messages FOR EACH STATEMENT EXECUTE FUNCTION "email_search_enqueue"();

-- Existing vectors move over as they are; rows still without one become the queue.
INSERT INTO "email_message_search" ("message_id", "account_id", "search_vector")
  SELECT "id", "account_id", "search_vector" FROM "email_messages" WHERE "search_vector" IS NOT NULL;
INSERT INTO "email_search_pending" ("message_id", "account_id")
  SELECT "id", "account_id" FROM "email_messages" WHERE "search_vector" IS NULL;

-- Drops the column's GIN index and the partial index of pending rows with it.
ALTER TABLE "email_messages" DROP COLUMN "search_vector";
