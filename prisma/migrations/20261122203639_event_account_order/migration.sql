-- Events: order per account instead of one global lock (issue 9, docs/events.md).
--
-- event_account_seqs holds each account's last event position. Every event-writing transaction bumps its
-- account's row in the statement that inserts the event, so the row lock (held to COMMIT) orders the event
-- transactions of one account and nothing else: ids (still one global BIGSERIAL) commit in increasing order
-- within an account, and `seq` numbers an account's events 1, 2, 3, ... without holes (a rolled-back
-- transaction rolls its bump back too), which lets each instance's ordered bus see a lost publish at once.
CREATE TABLE "event_account_seqs" (
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "last_seq" BIGINT NOT NULL,
    CONSTRAINT "event_account_seqs_pkey" PRIMARY KEY ("account_id")
);

ALTER TABLE "events" ADD COLUMN "seq" BIGINT;
UPDATE "events" e SET "seq" = n.rn
  FROM (SELECT "id", row_number() OVER (PARTITION BY "account_id" ORDER BY "id") AS rn FROM "events") n
 WHERE e."id" = n."id";
ALTER TABLE "events" ALTER COLUMN "seq" SET NOT NULL;
INSERT INTO "event_account_seqs" ("account_id", "last_seq")
SELECT "account_id", max("seq") FROM "events" GROUP BY "account_id";

-- The payload is kept as the JSON text the service wrote (json, not jsonb), so replay sends the stored bytes,
-- identical to what live delivery sent, without parsing and re-serialising them; nothing queries inside it.
ALTER TABLE "events" ALTER COLUMN "payload" TYPE JSON USING "payload"::json;
