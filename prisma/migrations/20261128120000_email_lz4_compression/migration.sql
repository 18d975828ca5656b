-- Issue 24 (inbound SMTP, docs/performance.md "round 10"): a stored message's large values are compressed with lz4
-- instead of pglz. A 4 KB message's row (body, extracted text, search vector) is over TOAST's 2 KB threshold, so
-- PostgreSQL compresses it on every INSERT, and the raw message's blob chunk too. Measured on 3,000 single-row INSERTs
-- of the bench's 4 KB reply (one transaction, backend CPU from /proc, alternated): 1,907-2,183 µs per row with pglz,
-- 1,640-1,827 µs with lz4; without the vector 180-190 against 70-110 µs.
--
-- Only new values use it; values already stored stay pglz and read as before (PostgreSQL records the method per
-- value). A server built without lz4 (PGlite, the embedded default) answers 0A000 feature_not_supported: there the
-- columns keep pglz and nothing else changes.
DO $$
BEGIN
  ALTER TABLE "email_messages"
    ALTER COLUMN "body" SET COMPRESSION lz4,
    ALTER COLUMN "html" SET COMPRESSION lz4,
    ALTER COLUMN "extracted_text" SET COMPRESSION lz4,
    ALTER COLUMN "search_vector" SET COMPRESSION lz4;
  ALTER TABLE "email_blob_chunks" ALTER COLUMN "data" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'PostgreSQL without lz4: email columns keep pglz';
END
$$;
