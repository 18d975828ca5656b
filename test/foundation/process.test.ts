import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient, startApp, tempDir } from '../helpers/app.js';
import { runEntry } from '../helpers/process.js';

const viewer = { query: '{ viewer { accountId } }' };

describe('npm start on the embedded default (PGlite in DATA_DIR)', { timeout: 120_000 }, () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterAll(() => cleanup());

  it('stops a start with a bad setting, naming every offending variable', async () => {
    const p = runEntry('main.ts', [], { DATA_DIR: dir, PORT: 'abc', DATABASE_URL: 'mysql://x', WORKER_POLL_MS: '1' });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('PORT');
    expect(p.stderr()).toContain('DATABASE_URL: must start with postgres://');
    expect(p.stderr()).toContain('WORKER_POLL_MS');
  });

  it('creates an account on first start, prints its key once, keeps it across a restart, and exits 0 on SIGTERM', async () => {
    const first = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0' });
    const [, apiKey] = await first.waitFor(/\n {2}(sb_[0-9a-f]{16}_[A-Za-z0-9_-]{43})\n/);
    const [, address] = await first.waitFor(/"address":"(http:\/\/[^"]+)"/);
    const res = await fetch(`${address}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(viewer),
    });
    expect(res.status).toBe(200);
    expect(first.stdout()).not.toMatch(new RegExp(`"[^"]*":"[^"]*${apiKey}`)); // never inside a log line
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0' });
    const [, address2] = await second.waitFor(/"address":"(http:\/\/[^"]+)"/);
    expect(second.stdout()).not.toContain('First start');
    const again = await fetch(`${address2}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(viewer),
    });
    expect(again.status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});

describe('npm run cli -- accounts:create', { timeout: 120_000 }, () => {
  it('prints {"accountId","apiKey"} and the key authenticates against the service', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Acme'], { DATA_DIR: dir });
      expect(await cli.exited).toBe(0);
      const printed = JSON.parse(cli.stdout().trim()) as { accountId: string; apiKey: string };
      expect(Object.keys(printed).sort()).toEqual(['accountId', 'apiKey']);
      const t = await startApp({ dataDir: dir, env: { DATABASE_URL: '' } });
      try {
        const a = accountClient(t.url, printed.accountId, printed.apiKey);
        expect((await a.request('POST', '/graphql', viewer)).body.data.viewer.accountId).toBe(printed.accountId);
      } finally {
        await t.close();
      }
    } finally {
      await cleanup();
    }
  });

  it('refuses an unknown scope', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Acme', '--scopes', 'root'], { DATA_DIR: dir });
      expect(await cli.exited).toBe(1);
      expect(cli.stderr()).toContain('unknown scope "root"');
    } finally {
      await cleanup();
    }
  });
});
