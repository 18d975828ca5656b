import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Database } from '../db.js';
import { decryptSecret, encryptSecret, secretsKeyId } from '../secrets.js';

/** The certificate both SMTP listeners serve (submission with implicit TLS, MX with STARTTLS). */
export interface SmtpCertificate {
  /** PEM certificate (chain). */
  cert: string;
  /** PEM private key. Never logged. */
  key: string;
  /** SHA-256 fingerprint, colon-separated upper-case hex (as `openssl x509 -fingerprint -sha256` prints it). */
  fingerprint256: string;
  /** `files`: SMTP_TLS_CERT/SMTP_TLS_KEY; `generated`: the self-signed one of this deployment. */
  source: 'files' | 'generated';
}

/** File names of the generated certificate in DATA_DIR (PGlite mode). */
export const GENERATED_CERT_FILE = 'smtp-tls.crt';
export const GENERATED_KEY_FILE = 'smtp-tls.key';
/** Row id of the generated certificate in PostgreSQL mode (table smtp_tls_certificates). */
const ROW_ID = 'default';
/** Validity of a generated certificate: 10 years (it is self-signed; clients pin its fingerprint or skip checks). */
const GENERATED_VALIDITY_DAYS = 3650;

/**
 * The SHA-256 fingerprint of the first (leaf) certificate of a PEM chain, as Node prints it (`AB:CD:…`): what
 * clients pin (the SMTP ports' generated certificate; the HTTP port's in DATA_DIR/admin.json for the local CLI).
 * @throws when the PEM holds no parsable certificate.
 */
export function fingerprintOf(certPem: string | Buffer): string {
  return new X509Certificate(certPem).fingerprint256;
}

/** Host names and addresses the generated certificate is valid for: the public host, localhost and the loopbacks. */
function generatedNames(config: Pick<Config, 'SMTP_PUBLIC_HOST'>): string[] {
  return [...new Set([config.SMTP_PUBLIC_HOST ?? hostname(), 'localhost'])];
}

/** A fresh self-signed RSA-2048 certificate (the `selfsigned` package, SHA-256 signature). */
async function generate(config: Pick<Config, 'SMTP_PUBLIC_HOST'>): Promise<{ cert: string; key: string }> {
  // Loaded only when a certificate has to be generated (start-up cost; docs/operations.md "Start-up").
  const selfsigned = (await import('selfsigned')).default;
  const names = generatedNames(config);
  const now = new Date();
  const pems = await selfsigned.generate([{ name: 'commonName', value: names[0]! }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + GENERATED_VALIDITY_DAYS * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...names.map((value) => ({ type: 2 as const, value })),
          { type: 7 as const, ip: '127.0.0.1' },
          { type: 7 as const, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function readPem(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${what} ${file} cannot be read: ${(err as Error).message}`);
  }
}

/** PGlite mode: DATA_DIR/smtp-tls.{crt,key} (key mode 0600), created once; another process's files win a race. */
async function fromDataDir(config: Config): Promise<{ cert: string; key: string }> {
  const certFile = path.resolve(config.DATA_DIR, GENERATED_CERT_FILE);
  const keyFile = path.resolve(config.DATA_DIR, GENERATED_KEY_FILE);
  try {
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const made = await generate(config);
  mkdirSync(path.dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, made.key, { mode: 0o600 });
  writeFileSync(certFile, made.cert, { mode: 0o644 });
  return made;
}

/**
 * `DATA_DIR=memory://` keeps nothing, so its certificate is generated per process, once, and shared by the apps of
 * that process (tests start dozens; generating an RSA-2048 certificate costs 0.2–0.5 s each). Keyed by the names it
 * is made for.
 */
const memoryCertificates = new Map<string, Promise<{ cert: string; key: string }>>();

function inMemory(config: Pick<Config, 'SMTP_PUBLIC_HOST'>): Promise<{ cert: string; key: string }> {
  const key = generatedNames(config).join(',');
  let made = memoryCertificates.get(key);
  if (!made) {
    made = generate(config);
    memoryCertificates.set(key, made);
    made.catch(() => memoryCertificates.delete(key));
  }
  return made;
}

/**
 * PostgreSQL mode: one row shared by every instance, the private key encrypted with the secrets key. The first
 * instance to insert wins (ON CONFLICT DO NOTHING) and every instance serves the row it reads back.
 */
async function fromDatabase(
  config: Config,
  database: Database,
  secretsKey: Buffer,
  log: Logger,
): Promise<{ cert: string; key: string }> {
  const db = database.prisma;
  let row = await db.smtpTlsCertificate.findUnique({ where: { id: ROW_ID } });
  if (!row) {
    const made = await generate(config);
    await db.smtpTlsCertificate.createMany({
      data: [
        {
          id: ROW_ID,
          certPem: made.cert,
          keyEncrypted: encryptSecret(secretsKey, made.key, `smtp-tls:${ROW_ID}`),
          keyId: secretsKeyId(secretsKey),
          fingerprint256: fingerprintOf(made.cert),
          createdAt: new Date(),
        },
      ],
      skipDuplicates: true,
    });
    row = await db.smtpTlsCertificate.findUniqueOrThrow({ where: { id: ROW_ID } });
  }
  try {
    return { cert: row.certPem, key: decryptSecret(secretsKey, row.keyEncrypted, `smtp-tls:${ROW_ID}`) };
  } catch {
    // Instances with different SECRETS_KEYs are a misconfiguration, but this one still serves mail: with a
    // certificate of its own, which clients pinning the shared one will refuse.
    log.error(
      { keyId: row.keyId, ownKeyId: secretsKeyId(secretsKey) },
      'SMTP TLS: the stored private key cannot be decrypted (SECRETS_KEY differs from the key that encrypted it); ' +
        'serving a certificate of this instance only. Give every instance the same SECRETS_KEY, or set SMTP_TLS_CERT/SMTP_TLS_KEY.',
    );
    return inMemory(config);
  }
}

/**
 * The SMTP certificate (issue 20 section 3): SMTP_TLS_CERT/SMTP_TLS_KEY when set (PEM files, read at start);
 * otherwise a self-signed certificate generated once: in DATA_DIR (PGlite), in the database (PostgreSQL, so every
 * instance serves the same one; key encrypted with the secrets key), or in memory for `DATA_DIR=memory://`.
 * A generated certificate is logged with its SHA-256 fingerprint as a warning (clients must pin it or skip checks).
 * An instance whose SECRETS_KEY cannot decrypt the stored key logs an error and serves a certificate of its own.
 * @throws Error when the files cannot be read or do not form a certificate and its key.
 */
export async function loadSmtpCertificate(
  config: Config,
  database: Database,
  secretsKey: Buffer,
  log: Logger,
): Promise<SmtpCertificate> {
  if (config.SMTP_TLS_CERT && config.SMTP_TLS_KEY) {
    const cert = readPem(config.SMTP_TLS_CERT, 'SMTP_TLS_CERT');
    const key = readPem(config.SMTP_TLS_KEY, 'SMTP_TLS_KEY');
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(cert);
    } catch (err) {
      throw new Error(`SMTP_TLS_CERT ${config.SMTP_TLS_CERT} is not a PEM certificate: ${(err as Error).message}`);
    }
    const { createPrivateKey } = await import('node:crypto');
    try {
      if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('the key does not match the certificate');
    } catch (err) {
      throw new Error(`SMTP_TLS_KEY ${config.SMTP_TLS_KEY} does not fit SMTP_TLS_CERT: ${(err as Error).message}`);
    }
    return { cert, key, fingerprint256: x509.fingerprint256, source: 'files' };
  }
  const made =
    database.kind === 'postgres'
      ? await fromDatabase(config, database, secretsKey, log)
      : config.DATA_DIR.startsWith('memory://')
        ? await inMemory(config)
        : await fromDataDir(config);
  const fingerprint256 = fingerprintOf(made.cert);
  log.warn(
    { fingerprint256 },
    'SMTP TLS: serving a self-signed certificate (set SMTP_TLS_CERT and SMTP_TLS_KEY for a trusted one); ' +
      `clients must pin SHA-256 fingerprint ${fingerprint256}`,
  );
  return { ...made, fingerprint256, source: 'generated' };
}
