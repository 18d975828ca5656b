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
const PENDING: Record<string, string> = {};

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
});
