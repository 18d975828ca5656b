import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'node:tls';
import selfsigned from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { GENERATED_KEY_FILE } from '../../src/infra/tls/smtp-certificate.js';
import { startApp, tempDir, usingPostgres } from '../helpers/app.js';

/** The fingerprint of the certificate a listener actually serves. */
function served(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(s.getPeerX509Certificate()!.fingerprint256);
      s.destroy();
    });
    s.on('error', reject);
  });
}

/** The SMTP TLS certificate (issue 20 section 3): configured files, or a self-signed one generated once. */
describe('SMTP TLS certificate', () => {
  it('is generated once and served again after a restart (DATA_DIR on PGlite, the database on PostgreSQL)', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const first = await startApp({ dataDir: dir, env: { SECRETS_KEY: 'a'.repeat(64) } });
      const cert = first.app.smtpCertificate()!;
      expect(cert.source).toBe('generated');
      expect(await served(first.app.smtpSubmissionPort()!)).toBe(cert.fingerprint256);
      await first.close();
      if (usingPostgres) {
        const row = await first.app.ctx.db.smtpTlsCertificate
          .findUnique({ where: { id: 'default' } })
          .catch(() => null);
        expect(row === null || !row.keyEncrypted.includes('PRIVATE KEY')).toBe(true);
      } else {
        expect(statSync(path.join(dir, GENERATED_KEY_FILE)).mode & 0o777).toBe(0o600);
      }
      const second = await startApp({ dataDir: dir, env: { SECRETS_KEY: 'a'.repeat(64) } });
      try {
        expect(second.app.smtpCertificate()!.fingerprint256).toBe(cert.fingerprint256);
        expect(await served(second.app.smtpSubmissionPort()!)).toBe(cert.fingerprint256);
        if (usingPostgres) {
          const row = await second.app.ctx.db.smtpTlsCertificate.findUniqueOrThrow({ where: { id: 'default' } });
          expect(row.fingerprint256).toBe(cert.fingerprint256);
          expect(row.keyEncrypted).not.toContain('PRIVATE KEY');
        }
      } finally {
        await second.close();
      }
      if (usingPostgres) {
        // An instance with another SECRETS_KEY (a misconfiguration) still starts, with a certificate of its own.
        const third = await startApp({ dataDir: dir, env: { SECRETS_KEY: 'b'.repeat(64) } });
        try {
          expect(third.app.smtpCertificate()!.fingerprint256).not.toBe(cert.fingerprint256);
          expect(await served(third.app.smtpSubmissionPort()!)).toBe(third.app.smtpCertificate()!.fingerprint256);
        } finally {
          await third.close();
        }
      }
    } finally {
      await cleanup();
    }
  });

  it('SMTP_TLS_CERT and SMTP_TLS_KEY are served by both listeners; a key that does not fit stops the start', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const mine = await selfsigned.generate([{ name: 'commonName', value: 'mail.example.test' }], {
        keySize: 2048,
        algorithm: 'sha256',
      });
      const other = await selfsigned.generate([{ name: 'commonName', value: 'other.example.test' }], { keySize: 2048 });
      writeFileSync(path.join(dir, 'cert.pem'), mine.cert);
      writeFileSync(path.join(dir, 'key.pem'), mine.private);
      writeFileSync(path.join(dir, 'other-key.pem'), other.private);
      const t = await startApp({
        env: { SMTP_TLS_CERT: path.join(dir, 'cert.pem'), SMTP_TLS_KEY: path.join(dir, 'key.pem') },
      });
      try {
        const cert = t.app.smtpCertificate()!;
        expect(cert.source).toBe('files');
        expect(await served(t.app.smtpSubmissionPort()!)).toBe(cert.fingerprint256);
      } finally {
        await t.close();
      }
      await expect(
        startApp({ env: { SMTP_TLS_CERT: path.join(dir, 'cert.pem'), SMTP_TLS_KEY: path.join(dir, 'other-key.pem') } }),
      ).rejects.toThrow(/SMTP_TLS_KEY .* does not fit SMTP_TLS_CERT/);
    } finally {
      await cleanup();
    }
  });
});
