-- Issue 24 (inbound SMTP, docs/performance.md "round 13: the search vector after the 250"): a stored message's
-- search vector is computed after delivery instead of in the INSERT that delivery commits before its `250`.
--
-- The generated column cost 530-1,270 µs of PostgreSQL CPU per 4 KB message inside the accepting statement (round
-- 11), most of it the text search parser; without it the inbound floor read 0.77-0.85x of the bare instead of
-- 0.51-0.61x. So, as Dovecot's FTS does (fts_autoindex: index after delivery; a search first indexes what is not
-- indexed yet), the column becomes a plain tsvector that every writer leaves NULL, and
-- src/domain/email/search-index.ts fills it: a background worker in batches shortly after delivery, and every
-- search with words first for the account it searches (so a search never misses a stored message).
--
-- DROP EXPRESSION (PostgreSQL 13+) keeps every stored value and the column's lz4 compression and GIN index; no
-- rewrite of the table. The function `email_message_search_vector` stays the one definition of the vector.
-- The partial index holds only the rows still to index (normally a few seconds' worth): the indexer and the search
-- find them per account in id order (UUIDv7, so oldest first) without reading the table.
ALTER TABLE "email_messages" ALTER COLUMN "search_vector" DROP EXPRESSION;
CREATE INDEX "email_messages_search_pending_idx" ON "email_messages" ("account_id", "id") WHERE "search_vector" IS NULL;
