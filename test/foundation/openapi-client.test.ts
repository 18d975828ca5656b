import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect } from 'vitest';
import { appTest } from '../helpers/fixture.js';

const root = new URL('../..', import.meta.url).pathname;

/** A client a user would write against the generated types: it must compile, and it runs against the service. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

export type Brand = components['schemas']['Brand'];
type ApiError = components['schemas']['Error'];

export async function run(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${apiKey}\` } });
  const created = await client.POST('/compliance/brands', {
    params: { header: { 'Idempotency-Key': 'typed-client-1' } },
    body: { name: 'Typed Client LLC', ein: '12-3456789', vertical: 'RETAIL', entityType: 'PRIVATE_PROFIT' },
  });
  if (!created.data) throw new Error(JSON.stringify(created.error));
  const brand: Brand = created.data;
  const read = await client.GET('/compliance/brands/{id}', { params: { path: { id: brand.id } } });
  const missing = await client.GET('/compliance/brands/{id}', { params: { path: { id: 'no-such-brand' } } });
  const missingCode: | 'UNAUTHENTICATED'
    | 'FORBIDDEN'
    | 'NOT_FOUND'
    | 'VALIDATION_FAILED'
    | 'BAD_URL'
    | 'RATE_LIMITED'
    | 'AUTH_RATE_LIMITED'
    | undefined =
    missing.error?.error.code;
  const envelope: ApiError | undefined = missing.error;
  const agent = await client.POST('/api/agents', { body: { name: 'Typed', systemPrompt: 'Be brief.' } });
  const removed = await client.DELETE('/api/agents/{id}', { params: { path: { id: agent.data?.id ?? '' } } });
  return {
    createdStatus: created.response.status,
    status: brand.status,
    readName: read.data?.name,
    missingStatus: missing.response.status,
    missingCode,
    missingMessage: envelope?.error.message,
    deletedStatus: removed.response.status,
  };
}
`;

/** Misuses the generated types; each line must be a compile error (so the types are not \`any\`). */
const MISUSE = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
export const a = client.POST('/compliance/brands', { body: { name: 42, ein: '12-3456789', vertical: 'RETAIL', entityType: 'PRIVATE_PROFIT' } });
export const b = client.GET('/compliance/brandz');
export const c: components['schemas']['Brand']['status'] = 7;
export const d = client.GET('/compliance/brands/{id}', { params: { path: { brandId: 'x' } } });
`;

const it = appTest();

describe('a typed client generated from GET /openapi.json (openapi-typescript + openapi-fetch)', () => {
  let dir: string;
  let types: string;
  it.beforeAll(async ({ t }) => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    types = astToString(await openapiTS(doc));
    dir = path.join(root, 'node_modules', '.cache', `openapi-client-${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'api.d.ts'), types);
    await writeFile(path.join(dir, 'client.ts'), CLIENT);
    await writeFile(path.join(dir, 'misuse.ts'), MISUSE);
    await writeFile(path.join(dir, 'package.json'), '{"type": "module"}\n');
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023', 'DOM'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    await writeFile(path.join(dir, 'tsconfig.misuse.json'), JSON.stringify({ compilerOptions, files: ['misuse.ts'] }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs tsc on a project of the client directory; resolves with its exit code and output. */
  async function tsc(project: string): Promise<{ code: number; output: string }> {
    const bin = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [bin, '-p', path.join(dir, project)]);
      return { code: 0, output: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, output: e.stdout };
    }
  }

  it('names the real schemas (not `schemas: never`)', () => {
    expect(types).not.toMatch(/schemas:\s*never/);
    for (const name of ['Brand', 'Campaign', 'Error', 'ErrorDetail', 'Webhook', 'BrandCreate', 'AgentCreate']) {
      expect(types).toMatch(new RegExp(`\\n\\s+${name}: \\{`));
    }
    expect(types).toContain('operations');
    expect(types).toContain('createBrand: {');
  });

  it('compiles a typed client call with tsc --noEmit', async () => {
    const result = await tsc('tsconfig.json');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('rejects misuse at compile time: a wrong field type, an unknown path, a wrong enum, a wrong path parameter', async () => {
    const result = await tsc('tsconfig.misuse.json');
    expect(result.code).not.toBe(0);
    const lines = new Set([...result.output.matchAll(/misuse\.ts\((\d+),/g)].map((m) => Number(m[1])));
    expect([...lines].sort((a, b) => a - b)).toEqual([5, 6, 7, 8]);
  }, 120_000);

  it('runs against the service and sees the documented statuses and codes', async ({ t }) => {
    const account = await t.newAccount();
    const client = (await import(path.join(dir, 'client.ts'))) as {
      run(baseUrl: string, apiKey: string): Promise<Record<string, unknown>>;
    };
    expect(await client.run(t.url, account.apiKey)).toEqual({
      createdStatus: 201,
      status: 'PENDING',
      readName: 'Typed Client LLC',
      missingStatus: 404,
      missingCode: 'NOT_FOUND',
      missingMessage: expect.stringContaining('no-such-brand'),
      deletedStatus: 204,
    });
  });
});
