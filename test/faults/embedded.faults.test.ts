import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { historyIds, type Instance, killInstance, publishLoad, report, startInstance } from './helpers.js';

/**
 * Fault test of the embedded default (issue 13): the service (src/main.ts, PGlite in DATA_DIR, in-process bus) is
 * killed with SIGKILL in the middle of a bounded stream of writes, several times, and started again on the same
 * DATA_DIR. Every write that was answered 2xx must be there after the restart.
 */

const ROUNDS = Number(process.env.FAULTS_EMBEDDED_ROUNDS ?? 3);
const PER_ROUND = Number(process.env.FAULTS_EMBEDDED_EVENTS ?? 120);

describe('faults: the embedded default killed with SIGKILL during writes', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let current: Instance | undefined;
  beforeAll(async () => {
    data = await tempDir('switchboard-faults-');
  });
  afterAll(async () => {
    if (current) await killInstance(current);
    await data?.cleanup();
  });

  it('keeps every accepted write across kills and restarts', async () => {
    const started = Date.now();
    const env = { DATA_DIR: data.dir, LOG_LEVEL: 'info', EVENT_STREAM_HEARTBEAT_MS: '1000' };
    current = await startInstance('embedded', { ...env, BOOTSTRAP_ACCOUNT: 'true' });
    const apiKey = current.proc.stdout().match(/(sb_[0-9a-f]{16}_[A-Za-z0-9_-]{43})/)?.[1];
    expect(apiKey).toBeTruthy();
    const accepted: string[] = [];
    let cut = 0;
    let refused = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const instance = current;
      const load = publishLoad(instance.url, apiKey!, {
        total: PER_ROUND,
        concurrency: 4,
        run: `embedded-${round}`,
        // kill -9 in the middle of the round, while requests are in flight.
        at: (k) => (k === Math.floor(PER_ROUND / 2) ? killInstance(instance) : undefined),
      });
      const result = await load;
      accepted.push(...result.accepted.map((e) => e.id));
      cut += result.failed;
      refused += result.refused;
      current = await startInstance(`embedded-${round + 1}`, { ...env, BOOTSTRAP_ACCOUNT: 'false' });
      const history = new Set(await historyIds(current.url, apiKey!));
      const lost = accepted.filter((id) => !history.has(id));
      expect(lost, `round ${round}`).toEqual([]);
    }
    const history = await historyIds(current.url, apiKey!);
    report({
      test: 'embedded',
      kills: ROUNDS,
      published: ROUNDS * PER_ROUND,
      accepted: accepted.length,
      refused,
      cut,
      lost: accepted.filter((id) => !history.includes(id)).length,
      duplicatedIds: history.length - new Set(history).size,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    expect(accepted.length).toBeGreaterThan(0);
    expect(history.length - new Set(history).size).toBe(0);
  });
});
