import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The domain opens no socket and imports no client library (ARCHITECTURE.md "Outside systems sit behind ports",
 * issue 10): these live in src/infra/ (adapters) and the front doors (src/http, src/rest, src/graphql, src/smtp).
 */
const FORBIDDEN = [
  'ioredis',
  'nodemailer',
  'smtp-server',
  'mailparser',
  'node:http',
  'node:https',
  'node:net',
  'node:dns',
  'node:tls',
  'node:dgram',
  'http',
  'https',
  'net',
  'dns',
  'undici',
  'ai',
  'fastify',
  'graphql',
  'graphql-yoga',
];
const FORBIDDEN_PREFIXES = ['@ai-sdk/', '@fastify/', '@pothos/', '@graphql-yoga/'];
/** Files still waiting for their move (each names the change that moves it). */
const PENDING: Record<string, string> = {
  'src/domain/webhooks/webhook.transport.ts': 'moves to src/infra with the one job queue (issue 10)',
};

const root = path.resolve(import.meta.dirname, '../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(full)));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

function isForbidden(spec: string): boolean {
  return FORBIDDEN.includes(spec) || FORBIDDEN_PREFIXES.some((p) => spec.startsWith(p));
}

describe('house rules (import graph)', () => {
  it('no file under src/domain imports a client library, socket module or front-door framework', async () => {
    const files = await sourceFiles(path.join(root, 'src/domain'));
    expect(files.length).toBeGreaterThan(20);
    const offences: string[] = [];
    for (const file of files) {
      const rel = path.relative(root, file);
      if (PENDING[rel]) continue;
      const text = await readFile(file, 'utf8');
      // Static imports, re-exports and dynamic import() calls, as TypeScript's own pre-processor sees them.
      const { importedFiles } = ts.preProcessFile(text, true, true);
      for (const { fileName } of importedFiles) {
        if (isForbidden(fileName)) offences.push(`${rel} imports ${fileName}`);
        if (fileName.startsWith('.')) {
          const target = path.relative(root, path.resolve(path.dirname(file), fileName));
          if (/^src\/(http|rest|graphql|smtp)\//.test(target)) offences.push(`${rel} imports front door ${target}`);
        }
      }
    }
    expect(offences).toEqual([]);
  });

  it('the check itself catches a forbidden import', () => {
    const { importedFiles } = ts.preProcessFile(
      "import { Redis } from 'ioredis';\nawait import('node:dns');",
      true,
      true,
    );
    expect(importedFiles.map((f) => f.fileName).filter(isForbidden)).toEqual(['ioredis', 'node:dns']);
  });
});
