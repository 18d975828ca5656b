-- Issue 24 (docs/performance.md "round 10: the email search vector — one parse per text"): what the generated
-- `email_messages.search_vector` costs PostgreSQL per stored message.
--
-- The vector ran the text search parser twice over subject and body: once for `english` (stems, stop words
-- dropped) and once for `simple` (words as written), and the parser is most of the cost (round 9: 1,660 µs of
-- PostgreSQL CPU for the bench's 4 KB body, english 903 µs, simple 705 µs). Since queries are stemmed the same way
-- as messages, what `simple` added for matching was essentially the stop words (english drops "will", "can", "the",
-- "don", ..., and "Will" and "Don" are names). So the text is now parsed once with `email_english`: `english`'s
-- parser and token mappings, its Snowball stemmer, but no stop-word list. Stop words are kept (stemmed) at their
-- positions, so "Will" matches and phrases written with stop words match word for word; stemming is as before;
-- words of other languages go through the same stemmer on both sides, as consistently as before. The addresses go
-- through `email_english` too (instead of `simple`), so an address part and a message word are stemmed alike in
-- one query ("alice" is stored and queried as 'alic'); whole addresses and domains are `email` and `host` tokens,
-- which every configuration maps to `simple`, as before.
--
-- Measured on the bench's 4 KB body: 1,900–2,050 → 1,150–1,333 µs of PostgreSQL CPU per stored message (the
-- single-row INSERT with the vector minus without it); the rest is the one parse, stemming the stop words `english`
-- skipped, and storing the value.
--
-- The query (src/domain/email/search.store.ts) is `email_english` OR `english`: the `english` reading drops the
-- query's stop words, so "invoices of march" still finds a message without "of", as before. An instance still
-- running the previous query (`english` OR `simple`) during a rolling upgrade finds what it found, through its
-- `english` reading, except a word spelled differently from its stem that only its `simple` reading matched.
--
-- The configuration is named with the schema the migration runs in (the tables' schema): a generated column's
-- function runs under whatever search_path the session has (pg_dump's restore sets it empty), and only pg_catalog's
-- configurations are found without one. The function stays IMMUTABLE with a fixed configuration.
--
-- Existing rows: a changed function does not recompute stored values, so the column and its GIN index are dropped
-- and added again: one rewrite of the table that computes every vector with this function, and a GIN index built
-- in bulk. `UPDATE ... SET subject = subject` would also recompute them, but leaves a dead copy of every row and a
-- new entry in every index of the table (a changed indexed column rules out HOT updates) until VACUUM, and grows the
-- GIN index entry by entry. The rewrite holds an ACCESS EXCLUSIVE lock on email_messages while it runs.
CREATE TEXT SEARCH DICTIONARY "email_english_stem" (TEMPLATE = pg_catalog.snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION "email_english" (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION "email_english" ALTER MAPPING REPLACE pg_catalog.english_stem WITH "email_english_stem";

DO $do$
BEGIN
  EXECUTE format($fn$
CREATE OR REPLACE FUNCTION "email_message_search_vector"(subject TEXT, body TEXT, from_address TEXT, to_addresses TEXT[], cc_addresses TEXT[])
RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $body$
BEGIN
  RETURN setweight(to_tsvector(%1$L, coalesce(subject, '')), 'A')
      || setweight(to_tsvector(%1$L,
           coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
           array_to_string(coalesce(cc_addresses, '{}'), ' ') || ' ' ||
           regexp_replace(coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
             array_to_string(coalesce(cc_addresses, '{}'), ' '), '[@.+_-]', ' ', 'g') || ' ' ||
           regexp_replace(coalesce(from_address, '') || ' ' || array_to_string(coalesce(to_addresses, '{}'), ' ') || ' ' ||
             array_to_string(coalesce(cc_addresses, '{}'), ' '), '[^ ]*@', '', 'g')), 'B')
      || setweight(to_tsvector(%1$L, left(coalesce(body, ''), 200000)), 'C');
END
$body$$fn$, format('%I.email_english', current_schema()));
END
$do$;

ALTER TABLE "email_messages" DROP COLUMN "search_vector";
ALTER TABLE "email_messages" ADD COLUMN "search_vector" tsvector
  GENERATED ALWAYS AS ("email_message_search_vector"("subject", "body", "from_address", "to_addresses", "cc_addresses")) STORED;
CREATE INDEX "email_messages_search_vector_idx" ON "email_messages" USING GIN ("search_vector");
