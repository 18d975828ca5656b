import { Readable } from 'node:stream';
import { Prisma } from '../../generated/prisma/client.js';
import { WRITE_OK } from '../events/event-log.js';
import type { Database, Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';

/**
 * Byte store of the email area: raw RFC 5322 messages, stored once (the recipients of one delivery share one blob)
 * and written and read in chunks of at most {@link BLOB_CHUNK_BYTES}, so neither the SMTP listener nor a download
 * ever holds a whole message (issue 21 item 2, issue 26 item 3). Kept in the database (tables `email_blobs`,
 * `email_blob_chunks`; PostgreSQL and PGlite alike); the three functions below are the whole interface, so an
 * S3-compatible store can replace them later (a blob id becomes an object key).
 */
export const BLOB_CHUNK_BYTES = 256 * 1024;

/** A blob being written: {@link BlobWriter.write} chunks in order, then {@link BlobWriter.finish}. */
export class BlobWriter {
  readonly id = uuidv7();
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #seq = 0;
  #size = 0;
  #started = false;

  /**
   * @param db where the blob's rows go (a transaction's client for {@link writeBlob} inside one).
   * @param direct when given (never inside a transaction: it runs each statement on its own), the chunk rows are
   *   written below Prisma with the Buffer itself as the parameter: PostgreSQL gets it in binary, PGlite as one
   *   native hex string (src/infra/db.ts PGLITE_BYTEA). Through Prisma a chunk was copied into a Uint8Array, turned
   *   into base64 for the query and back (about 1.5 MB of garbage per 256 KiB chunk, 60 MB per 10 MB message), the
   *   largest part of what a burst of large inbound mail left in the heap (issue 26 item 3).
   */
  constructor(
    private readonly db: Tx,
    private readonly now: Date,
    private readonly direct?: Pick<Database, 'statement'>,
  ) {}

  /** Total bytes written so far. */
  get size(): number {
    return this.#size;
  }

  /** Appends bytes; writes a chunk row whenever {@link BLOB_CHUNK_BYTES} are pending (await it for backpressure). */
  async write(bytes: Buffer): Promise<void> {
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    this.#size += bytes.length;
    while (this.#pendingBytes >= BLOB_CHUNK_BYTES) {
      const all = Buffer.concat(this.#pending);
      await this.#flush(all.subarray(0, BLOB_CHUNK_BYTES));
      const rest = all.subarray(BLOB_CHUNK_BYTES);
      this.#pending = rest.length > 0 ? [Buffer.from(rest)] : [];
      this.#pendingBytes = rest.length;
    }
  }

  /**
   * Writes what is pending and the blob's size. A blob that fits in one chunk (nothing written yet: most mail) is
   * stored with ONE statement, the blob row with its final size and its chunk together (issue 24: three round trips
   * were a third of the inbound path's statements). @returns the blob id and its size in bytes.
   */
  async finish(): Promise<{ id: string; size: number }> {
    if (!this.#started && this.#pendingBytes > 0) {
      const bytes = this.#pendingWhole();
      this.#started = true;
      await this.db.$executeRaw`
        WITH b AS (
          INSERT INTO email_blobs (id, size, chunks, created_at) VALUES (${this.id}, ${this.#size}, 1, ${this.now})
          RETURNING id
        )
        INSERT INTO email_blob_chunks (blob_id, seq, data) SELECT b.id, 0, ${bytes} FROM b`;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#seq = 1;
      return { id: this.id, size: this.#size };
    }
    if (this.#pendingBytes > 0 || !this.#started) await this.#flush(Buffer.concat(this.#pending));
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.db.emailBlob.update({ where: { id: this.id }, data: { size: this.#size, chunks: this.#seq } });
    return { id: this.id, size: this.#size };
  }

  /**
   * For a blob that fits in one chunk and is not written yet (most mail): the CTE bodies of a single-statement
   * write (EventLog.write; they run where WRITE_OK holds) that store it, the blob row with its final size and its
   * chunk, so the raw message commits with the rows that name it (issue 24: one round trip less per inbound
   * message). When that write stores nothing, call {@link finish} as usual. @returns null when chunks were already
   * written (a larger message): call {@link finish}.
   */
  singleStatementChanges(): Prisma.Sql[] | null {
    if (this.#started || this.#pendingBytes === 0) return null;
    const bytes = this.#pendingWhole();
    return [
      Prisma.sql`INSERT INTO email_blobs (id, size, chunks, created_at)
        SELECT ${this.id}, ${this.#size}::int, 1, ${this.now}::timestamptz WHERE ${WRITE_OK}`,
      Prisma.sql`INSERT INTO email_blob_chunks (blob_id, seq, data) SELECT ${this.id}, 0, ${bytes}::bytea WHERE ${WRITE_OK}`,
    ];
  }

  /** Removes what was written (a refused or failed message leaves nothing behind). Never throws. */
  async abort(): Promise<void> {
    this.#pending = [];
    if (this.#started) await deleteBlob(this.db, this.id).catch(() => undefined);
  }

  /**
   * The pending bytes as one Buffer, without a copy when they are one write (a held message: issue 24, the
   * message's bytes were copied twice here, by a concat of one and a Uint8Array of that). Prisma and pg both read a
   * Buffer's own window of its memory (byteOffset and length), so a slice of a larger buffer is written as it is.
   */
  #pendingWhole(): Buffer {
    return this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes);
  }

  async #flush(bytes: Buffer): Promise<void> {
    if (!this.#started) {
      await this.db.emailBlob.create({ data: { id: this.id, size: 0, chunks: 0, createdAt: this.now } });
      this.#started = true;
    }
    if (bytes.length === 0) return;
    if (this.direct) {
      await this.direct.statement({
        text: 'INSERT INTO email_blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)',
        values: [this.id, this.#seq, bytes],
      });
    } else {
      await this.db.emailBlobChunk.create({ data: { blobId: this.id, seq: this.#seq, data: new Uint8Array(bytes) } });
    }
    this.#seq += 1;
  }
}

/** Stores `bytes` as one blob. @returns its id and size in bytes. */
export async function writeBlob(db: Tx, bytes: Buffer, now: Date): Promise<{ id: string; size: number }> {
  const w = new BlobWriter(db, now);
  for (let at = 0; at < bytes.length; at += BLOB_CHUNK_BYTES) {
    await w.write(bytes.subarray(at, at + BLOB_CHUNK_BYTES));
  }
  return w.finish();
}

/**
 * The blob's bytes as a stream, one chunk row read at a time (reading waits for the consumer).
 * A blob that does not exist yields no bytes.
 */
export function readBlob(db: Tx, id: string): Readable {
  async function* chunks() {
    const blob = await db.emailBlob.findUnique({ where: { id } });
    if (!blob) return;
    for (let seq = 0; seq < blob.chunks; seq++) {
      const row = await db.emailBlobChunk.findUnique({ where: { blobId_seq: { blobId: id, seq } } });
      if (!row) throw new Error(`blob ${id} misses chunk ${seq}`);
      yield Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** The whole blob in memory (for composing a forward or relaying a small message). */
export async function readBlobBuffer(db: Tx, id: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of readBlob(db, id)) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** Deletes a blob and its chunks. */
export async function deleteBlob(db: Tx, id: string): Promise<void> {
  await db.emailBlob.deleteMany({ where: { id } });
}

/** The blob's row (its size in bytes and number of chunks), or null. */
export function findBlob(db: Tx, id: string): Promise<{ id: string; size: number; chunks: number } | null> {
  return db.emailBlob.findUnique({ where: { id } });
}
