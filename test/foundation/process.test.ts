import { X509Certificate } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient, startApp, tempDir } from '../helpers/app.js';
import { runEntry } from '../helpers/process.js';

const viewer = { query: '{ viewer { accountId } }' };

// Bounds come from test/vitest.config.ts (300 s, only to stop a hung test): these tests spawn the service once or
// twice through tsx, and a bound of 120 s was hit at load average 25-35 on 2 cores.
describe('npm start on the embedded default (PGlite in DATA_DIR)', () => {
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

describe('npm run cli -- accounts:create', () => {
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

describe('accounts while the service runs on the embedded default', { timeout: 600_000 }, () => {
  it('the CLI goes through the running service: its key works at once and after a restart', async () => {
    const { dir, cleanup } = await tempDir();
    const service = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', BOOTSTRAP_ACCOUNT: 'false' });
    try {
      const [, address] = await service.waitFor(/"address":"(http:\/\/[^"]+)"/, 180_000);
      const adminFile = await stat(path.join(dir, 'admin.json'));
      expect(adminFile.mode & 0o777).toBe(0o600);

      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Live'], { DATA_DIR: dir });
      expect(await cli.exited).toBe(0);
      const printed = JSON.parse(cli.stdout().trim()) as { accountId: string; apiKey: string };
      expect(Object.keys(printed).sort()).toEqual(['accountId', 'apiKey']);
      const live = accountClient(address as string, printed.accountId, printed.apiKey);
      expect((await live.request('POST', '/graphql', viewer)).body.data.viewer.accountId).toBe(printed.accountId);

      const key = runEntry('cli.ts', ['keys:create', '--account', printed.accountId, '--scopes', 'events:write'], {
        DATA_DIR: dir,
      });
      expect(await key.exited).toBe(0);
      const { apiKey: writerKey } = JSON.parse(key.stdout().trim()) as { apiKey: string };
      const writer = accountClient(address as string, printed.accountId, writerKey);
      expect((await writer.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} })).status).toBe(202);

      const bad = runEntry('cli.ts', ['keys:create', '--account', 'missing', '--scopes', 'email'], { DATA_DIR: dir });
      expect(await bad.exited).toBe(1);
      expect(bad.stdout()).toBe('');
      expect(bad.stderr()).toContain('404 NOT_FOUND');

      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      const again = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', BOOTSTRAP_ACCOUNT: 'false' });
      try {
        const [, address2] = await again.waitFor(/"address":"(http:\/\/[^"]+)"/, 180_000);
        const after = accountClient(address2 as string, printed.accountId, printed.apiKey);
        expect((await after.request('POST', '/graphql', viewer)).status).toBe(200);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await cleanup();
    }
  });

  it('a second instance on the same DATA_DIR refuses at once (exit 3); a lock left by kill -9 does not block', async () => {
    const { dir, cleanup } = await tempDir();
    const first = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', BOOTSTRAP_ACCOUNT: 'false' });
    try {
      await first.waitFor(/"address":"(http:\/\/[^"]+)"/, 180_000);
      const second = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0' });
      expect(await second.exited).toBe(3);
      expect(second.stderr()).toContain(`is in use by process ${first.child.pid}`);
      expect(second.stderr()).not.toContain('EADDRINUSE');

      // Without its admin file the CLI cannot reach the service and must not print a key.
      const { rm } = await import('node:fs/promises');
      await rm(path.join(dir, 'admin.json'));
      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Nope'], { DATA_DIR: dir });
      expect(await cli.exited).toBe(3);
      expect(cli.stdout()).toBe('');
      expect(cli.stderr()).toContain('SWITCHBOARD_URL and ADMIN_TOKEN');

      first.child.kill('SIGKILL');
      await first.exited;
      const third = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', BOOTSTRAP_ACCOUNT: 'false' });
      try {
        const [, address] = await third.waitFor(/"address":"(http:\/\/[^"]+)"/, 180_000);
        expect((await fetch(`${address}/healthz`)).status).toBe(200);
      } finally {
        third.child.kill('SIGTERM');
        expect(await third.exited).toBe(0);
      }
    } finally {
      first.child.kill('SIGKILL');
      await cleanup();
    }
  });

  it("the CLI reaches another host's service with SWITCHBOARD_URL and ADMIN_TOKEN, and refuses a wrong token", async () => {
    const token = 'cli-admin-token-0123456789abcdef';
    const t = await startApp({ env: { ADMIN_TOKEN: token } });
    try {
      const env = { DATA_DIR: 'memory://', SWITCHBOARD_URL: t.url, ADMIN_TOKEN: token };
      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Remote'], env);
      expect(await cli.exited).toBe(0);
      const printed = JSON.parse(cli.stdout().trim()) as { accountId: string; apiKey: string };
      const remote = accountClient(t.url, printed.accountId, printed.apiKey);
      expect((await remote.request('POST', '/graphql', viewer)).status).toBe(200);
      const wrong = runEntry('cli.ts', ['accounts:create', '--name', 'X'], { ...env, ADMIN_TOKEN: `${token}-wrong` });
      expect(await wrong.exited).toBe(1);
      expect(wrong.stdout()).toBe('');
      expect(wrong.stderr()).toContain('401 UNAUTHENTICATED');
    } finally {
      await t.close();
    }
  });

  it('with TLS on the HTTP port, admin.json says https and pins the certificate; the CLI accepts it and no other', async () => {
    const { dir, cleanup } = await tempDir();
    const attrs = [{ name: 'commonName', value: 'localhost' }];
    const pems = await selfsigned.generate(attrs, { keySize: 2048, algorithm: 'sha256' });
    const other = await selfsigned.generate(attrs, { keySize: 2048, algorithm: 'sha256' });
    await writeFile(path.join(dir, 'cert.pem'), pems.cert);
    await writeFile(path.join(dir, 'key.pem'), pems.private);
    const service = runEntry('main.ts', [], {
      DATA_DIR: dir,
      PORT: '0',
      BOOTSTRAP_ACCOUNT: 'false',
      HTTP_TLS_CERT: path.join(dir, 'cert.pem'),
      HTTP_TLS_KEY: path.join(dir, 'key.pem'),
    });
    try {
      await service.waitFor(/"address":"(https?:\/\/[^"]+)"/, 180_000);
      const adminPath = path.join(dir, 'admin.json');
      const admin = JSON.parse(await readFile(adminPath, 'utf8')) as { url: string; certSha256?: string };
      expect(admin.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(admin.certSha256).toBe(new X509Certificate(pems.cert).fingerprint256);

      const cli = runEntry('cli.ts', ['accounts:create', '--name', 'Tls'], { DATA_DIR: dir });
      expect(await cli.exited).toBe(0);
      const printed = JSON.parse(cli.stdout().trim()) as { accountId: string; apiKey: string };
      // The key works over the TLS port (this client trusts the test's certificate and skips only the name check).
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(
          `${admin.url}/graphql`,
          {
            method: 'POST',
            ca: pems.cert,
            checkServerIdentity: () => undefined,
            headers: { authorization: `Bearer ${printed.apiKey}`, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(viewer));
      });
      expect(status).toBe(200);

      // Another certificate's fingerprint in admin.json: the CLI refuses the connection and prints no key.
      await writeFile(
        adminPath,
        JSON.stringify({ ...admin, certSha256: new X509Certificate(other.cert).fingerprint256 }),
      );
      const pinned = runEntry('cli.ts', ['accounts:create', '--name', 'Mitm'], { DATA_DIR: dir });
      expect(await pinned.exited).toBe(1);
      expect(pinned.stdout()).toBe('');
      expect(pinned.stderr()).toContain('CERT_PIN_MISMATCH');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await cleanup();
    }
  });
});
