/**
 * Settling a group commit (several callers' writes sent as ONE statement): EventLog.write's per-account batches
 * and the send API's SendWriteQueue (outbound.store.ts) share this.
 */

/** A caller waiting for its write of a group commit. */
export interface WaitingWrite<W, R> {
  write: W;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Whether `err` is PostgreSQL refusing a statement: an SQLSTATE (5 characters) outside class 08 (connection
 * exception). Then nothing of the statement was written, so its writes may be sent again one by one. A lost
 * connection may have lost the answer of a commit, so it is not a refusal.
 */
export function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}

/**
 * Runs `run` once for every write of `batch` (one statement) and settles each caller with its result. When the
 * database refused the statement ({@link refusedByDatabase}) and the batch has several writes, each is run again
 * alone, in order, so one bad write fails alone; any other failure rejects every caller of the batch as it is.
 * @param run one statement for the writes; resolves one result per write, in order.
 */
export async function settleBatch<W, R>(
  batch: readonly WaitingWrite<W, R>[],
  run: (writes: W[]) => Promise<R[]>,
): Promise<void> {
  try {
    const results = await run(batch.map((e) => e.write));
    for (const [i, e] of batch.entries()) e.resolve(results[i]!);
  } catch (err) {
    if (batch.length === 1 || !refusedByDatabase(err)) {
      for (const e of batch) e.reject(err);
      return;
    }
    for (const e of batch) {
      try {
        e.resolve((await run([e.write]))[0]!);
      } catch (one) {
        e.reject(one);
      }
    }
  }
}
