/**
 * Writes the served OpenAPI document (`GET /openapi.json`) to a file without listening or touching ./data:
 * builds the app on an in-memory PGlite, asks Fastify for the document, closes. Used by `npm run lint:openapi`.
 * Usage: `tsx scripts/openapi-dump.ts [out.json]` (default: openapi.json in the working directory).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/infra/logger.js';

const out = process.argv[2] ?? 'openapi.json';
// Only what the document needs: the environment (a DATABASE_URL, a REDIS_URL) must not change it.
const config = loadConfig({
  DATA_DIR: 'memory://',
  BOOTSTRAP_ACCOUNT: 'false',
  SMTP_PORT: '0',
  SMTP_SUBMISSION_PORT: '-1',
  SECRETS_KEY: '0'.repeat(64),
});
const app = await buildApp(config, { logger: createLogger('silent'), startWorkers: false });
try {
  await app.http.ready();
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(app.http.swagger(), null, 2)}\n`);
  console.log(`wrote ${out}`);
} finally {
  await app.close();
}
