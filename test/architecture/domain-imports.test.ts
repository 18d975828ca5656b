import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { type DataSite, dataSites, isStoreFile, prismaDelegates, QUERY_KINDS } from '../../scripts/house-rules.js';

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
const PENDING: Record<string, string> = {};

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Files of src/domain still holding Prisma calls or SQL outside a store (issue 23 step 2: each area's stores are
 * being grown from its `*.batch.ts` and services in parallel changes). Each names what it still holds, measured with
 * `npm run house -- --sites`; an entry leaves when its file holds none (the test fails on an entry that is clean).
 */
const PENDING_QUERIES: Record<string, string> = {};

/**
 * Files of src/domain outside stores still naming generated Prisma types or values (issue 23 steps 2 and 3: no Prisma
 * type in a service signature; one domain shape per noun). Same rule as {@link PENDING_QUERIES}.
 */
const PENDING_GENERATED: Record<string, string> = {};

/** Where each non-store file of src/domain reaches the database or names generated Prisma code. */
async function domainDataSites(): Promise<Map<string, DataSite[]>> {
  const delegates = prismaDelegates();
  const out = new Map<string, DataSite[]>();
  for (const file of await sourceFiles(path.join(root, 'src/domain'))) {
    const rel = path.relative(root, file);
    if (isStoreFile(rel)) continue;
    const sites = dataSites(rel, await readFile(file, 'utf8'), delegates);
    if (sites.length) out.set(rel, sites);
  }
  return out;
}

/** Offences of `sites` of the given kinds, with files in `pending` left out; and pending entries that are clean. */
function judge(
  all: Map<string, DataSite[]>,
  kinds: readonly DataSite['kind'][],
  pending: Record<string, string>,
): { offences: string[]; stalePending: string[] } {
  const offences: string[] = [];
  const dirty = new Set<string>();
  for (const [rel, sites] of all)
    for (const s of sites.filter((x) => kinds.includes(x.kind))) {
      dirty.add(rel);
      if (!pending[rel]) offences.push(`${rel}:${s.line} ${s.kind} ${s.text}`);
    }
  return { offences, stalePending: Object.keys(pending).filter((rel) => !dirty.has(rel)) };
}

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

/**
 * Module-level maps keyed by the app (`const x = new WeakMap<AppContext, …>()` at the top of a file): per-app state
 * that `AppContext` does not show. Per-app state is a named AppContext field instead (issue 10). @returns the names.
 */
function perAppMaps(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const decl of statement.declarationList.declarations) {
      const init = decl.initializer;
      if (!init || !ts.isNewExpression(init)) continue;
      const ctor = init.expression.getText(source);
      const key = init.typeArguments?.[0]?.getText(source);
      if ((ctor === 'WeakMap' || ctor === 'Map') && (key === 'AppContext' || key === 'DomainContext'))
        names.push(decl.name.getText(source));
    }
  }
  return names;
}

describe('house rules (import graph)', () => {
  it('no file under src/domain imports a client library, socket module, front-door framework, infra or the app', async () => {
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
          // The domain is the kernel's: concrete infra and the app's composition root sit above it (issue 23).
          if (
            /^src\/infra\//.test(target) ||
            /^src\/(app|app-context|main|cli)(\.js)?$/.test(target.replace(/\.ts$/, ''))
          ) {
            offences.push(`${rel} reaches up to ${target}`);
          }
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

  it('no module under src keeps per-app state in a module-level map keyed by AppContext', async () => {
    const files = await sourceFiles(path.join(root, 'src'));
    const offences: string[] = [];
    for (const file of files) {
      const rel = path.relative(root, file);
      if (rel.startsWith('src/generated/')) continue;
      for (const name of perAppMaps(rel, await readFile(file, 'utf8'))) offences.push(`${rel}: ${name}`);
    }
    expect(offences).toEqual([]);
  });

  it('the per-app state check itself catches a module-level WeakMap<AppContext>', () => {
    const text = [
      'const heartbeats = new WeakMap<AppContext, Timer>();',
      'const frames = new WeakMap<StoredEvent, string>();',
      'function f() { const local = new WeakMap<AppContext, number>(); }',
    ].join('\n');
    expect(perAppMaps('x.ts', text)).toEqual(['heartbeats']);
  });

  it('domain functions take parsed input: nothing under src/domain parses a caller’s input again', async () => {
    // Inputs are parsed once, at the door (REST route schemas, GraphQL parseArgs, the CLI): docs/architecture.md.
    const offences: string[] = [];
    for (const file of await sourceFiles(path.join(root, 'src/domain'))) {
      const rel = path.relative(root, file);
      if (rel === 'src/domain/validation.ts') continue;
      if (/\bparseInput\s*\(/.test(await readFile(file, 'utf8'))) offences.push(rel);
    }
    expect(offences).toEqual([]);
  });

  it('no Prisma call or SQL outside stores: in src/domain only *.store.ts, the event log and the kernel query', async () => {
    // Issue 23 step 2: services call stores with plain parameters. `$transaction` is not a query: a service may
    // open one and hand its `tx` to stores.
    const { offences, stalePending } = judge(await domainDataSites(), QUERY_KINDS, PENDING_QUERIES);
    expect(offences).toEqual([]);
    expect(stalePending, 'PENDING_QUERIES entries whose file holds no query any more').toEqual([]);
  });

  it('no generated Prisma type or value outside stores (services exchange domain shapes with stores)', async () => {
    const { offences, stalePending } = judge(
      await domainDataSites(),
      ['prisma-type', 'prisma-value'],
      PENDING_GENERATED,
    );
    expect(offences).toEqual([]);
    expect(stalePending, 'PENDING_GENERATED entries whose file names no generated code any more').toEqual([]);
  });

  it('the store check itself catches queries, SQL and generated imports, and lets transactions and look-alikes pass', () => {
    const text = [
      "import { type Brand, Prisma } from '../../generated/prisma/client.js';",
      "import type { Campaign } from '../../generated/prisma/client.js';",
      'export async function f(ctx: DomainContext, tx: Tx, id: string) {',
      '  await ctx.db.brand.findUnique({ where: { id } });',
      '  await tx.emailMessage.update({ where: { id }, data: {} });',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text under test
      '  await tx.$executeRaw`UPDATE brands SET name = ${id}`;',
      '  await ctx.database.read(STATEMENT, [id]);',
      "  const q = 'SELECT id FROM brands WHERE id = $1';",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text under test
      '  const frag = Prisma.sql`id = ${id}`;',
      '  await ctx.db.$transaction(async (t2) => save(t2, id));',
      '  seen.delete(id);',
      "  const method = 'DELETE';",
      '  await store.brand.count(id);',
      '}',
    ].join('\n');
    const delegates = new Set(['brand', 'emailMessage']);
    const sites = dataSites('src/domain/compliance/x.service.ts', text, delegates).map((s) => `${s.line} ${s.kind}`);
    expect(sites).toEqual([
      '1 prisma-type',
      '1 prisma-value',
      '2 prisma-type',
      '4 prisma-call',
      '5 prisma-call',
      '6 raw-sql',
      '7 database-port',
      '8 sql-text',
      '9 sql-text',
      // `store.brand.count` has the shape of a delegate call: stores are named `…Store`, not after models.
      '13 prisma-call',
    ]);
    expect(isStoreFile('src/domain/compliance/compliance.store.ts')).toBe(true);
    expect(isStoreFile('src/domain/events/event-log.ts')).toBe(true);
    expect(isStoreFile('src/domain/kernel/db.ts')).toBe(true);
    expect(isStoreFile('src/domain/compliance/brand.service.ts')).toBe(false);
  });
});
