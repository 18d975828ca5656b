import { chmodSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Name of the file in DATA_DIR through which a running service tells the local CLI where its admin surface is. */
export const ADMIN_FILE = 'admin.json';

/** Contents of DATA_DIR/admin.json. */
export interface AdminFile {
  /**
   * Base URL of the running service as seen from this host, e.g. http://127.0.0.1:3000, or https://127.0.0.1:3000
   * when the HTTP port serves TLS (HTTP_TLS_CERT).
   */
  url: string;
  /** The service's per-start local admin token (src/domain/accounts/admin.service.ts AdminTokens). */
  token: string;
  /** Process id of the service, so a file left by a killed process is recognised as stale. */
  pid: number;
  /**
   * With TLS on the HTTP port: the SHA-256 fingerprint of its leaf certificate, as Node prints it (`AB:CD:…`, 95
   * characters). The local CLI pins it: it accepts exactly that certificate on the loopback connection, whatever its
   * issuer or names (a self-signed one has neither a trusted issuer nor a 127.0.0.1 name).
   */
  certSha256?: string;
}

/**
 * Writes DATA_DIR/admin.json with mode 0600 (readable only by the user running the service, like the PGlite files
 * and secrets.key next to it), atomically through a temporary file; creates DATA_DIR when missing.
 * @throws when the directory or file cannot be written (the caller logs it; the service keeps running).
 */
export function writeAdminFile(dataDir: string, info: AdminFile): void {
  // On PostgreSQL nothing else creates DATA_DIR, so a first start there must make it (owner-only, like PGlite's).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.resolve(dataDir, ADMIN_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** Reads DATA_DIR/admin.json; undefined when absent or unreadable. */
export function readAdminFile(dataDir: string): AdminFile | undefined {
  try {
    const info = JSON.parse(readFileSync(path.resolve(dataDir, ADMIN_FILE), 'utf8')) as Partial<AdminFile>;
    if (typeof info.url !== 'string' || typeof info.token !== 'string' || typeof info.pid !== 'number')
      return undefined;
    if (info.certSha256 !== undefined && typeof info.certSha256 !== 'string') return undefined;
    return {
      url: info.url,
      token: info.token,
      pid: info.pid,
      ...(info.certSha256 ? { certSha256: info.certSha256 } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Removes DATA_DIR/admin.json if it is still the one holding `token` (another instance may have replaced it). */
export function removeAdminFile(dataDir: string, token: string): void {
  if (readAdminFile(dataDir)?.token !== token) return;
  try {
    unlinkSync(path.resolve(dataDir, ADMIN_FILE));
  } catch {}
}

/**
 * The URL a local client uses for a server listening on `host:port` (a wildcard address becomes loopback):
 * `https://` when the port serves TLS (`tls` true), else `http://`.
 */
export function localUrl(host: string, port: number, tls = false): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `${tls ? 'https' : 'http'}://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
