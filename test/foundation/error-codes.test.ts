import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/rest/error-codes.js';

const src = new URL('../../src', import.meta.url).pathname;

/** Every .ts file under src/, except the catalog itself. */
async function sources(): Promise<{ file: string; text: string }[]> {
  const entries = await readdir(src, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.endsWith(path.join('rest', 'error-codes.ts')) && !f.includes(`${path.sep}generated${path.sep}`));
  return Promise.all(
    files.map(async (file) => ({ file: path.relative(src, file), text: await readFile(file, 'utf8') })),
  );
}

const STATUS_OF: Record<string, number> = { ConflictError: 409, UnprocessableError: 422, BadRequestError: 400 };

describe('the error-code catalog the OpenAPI document is generated from (src/rest/error-codes.ts)', () => {
  it('lists every code the source raises, with the status it is raised with', async () => {
    const raised: { code: string; status: number; where: string }[] = [];
    for (const { file, text } of await sources()) {
      for (const m of text.matchAll(/new (ConflictError|UnprocessableError|BadRequestError)\(\s*'([A-Z][A-Z_]+)'/g)) {
        raised.push({ code: m[2]!, status: STATUS_OF[m[1]!]!, where: file });
      }
      for (const m of text.matchAll(/new DomainError\(\s*'([A-Z][A-Z_]+)',\s*(?:`[^`]*`|'[^']*'),\s*(\d{3})/g)) {
        raised.push({ code: m[1]!, status: Number(m[2]), where: file });
      }
    }
    expect(raised.length).toBeGreaterThan(20);
    for (const { code, status, where } of raised) {
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES]?.status, `${code} (${where})`).toBe(status);
    }
  });

  it('lists no code that nothing in the source answers', async () => {
    const all = (await sources()).map((s) => s.text).join('\n');
    for (const code of Object.keys(ERROR_CODES)) expect(all, code).toContain(`'${code}'`);
  });
});
