// The GraphiQL page in a real browser (Debian's Chromium through playwright-core): packaged assets only (every
// request of the page goes to this service), an API key given in the page's key bar that survives a reload, a
// query run from the page and its result read back from the page.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing`);
  console.warn(`SKIPPED: browser test needs Chromium at ${CHROMIUM} (apt-get install chromium); .ci/run installs it.`);
}

const it = appTest();

describe.skipIf(!available)('GraphiQL in Chromium', () => {
  let a: TestAccount;
  let browser: BrowserContext;
  let profile: string;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    expect((await a.request('POST', '/compliance/brands', brandBody({ name: 'Browser Test Brand' }))).status).toBe(201);
    profile = await mkdtemp(path.join(tmpdir(), 'switchboard-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('loads from packaged assets, keeps the key across a reload, runs a query and shows the result', async ({ t }) => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== new URL(t.url).origin) foreign.push(req.url());
    });
    const query = '{ brands(first: 5) { edges { node { name status } } } }';
    await page.goto(`${t.url}/graphql?query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 60_000 });

    // Without a key the page says so, and GraphQL answers in its own error shape (GraphiQL can show it).
    await expect(page.locator('#sb-key-status').textContent()).resolves.toMatch(/No key/);
    await page.locator('#sb-api-key').fill(a.apiKey);
    await page.locator('#sb-save-key').click();
    await page.reload();
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 60_000 });
    await expect(page.locator('#sb-key-status').textContent()).resolves.toMatch(/Key saved/);
    expect(await page.locator('#sb-api-key').inputValue()).toBe(a.apiKey);

    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect
      .poll(async () => ((await response.textContent()) ?? '').replace(/\s+/g, ' '), { timeout: 60_000, interval: 250 })
      .toMatch(/Browser Test Brand/);
    const text = ((await response.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toMatch(/"name": "Browser Test Brand", "status": "(PENDING|ACTIVE|FAILED)"/);
    expect(text).not.toMatch(/UNAUTHENTICATED/);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('fetches the schema again once a key is saved, without a reload (no lasting "Error fetching schema")', async ({
    t,
  }) => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/graphql`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 60_000 });
    await page.locator('#sb-forget-key').click(); // a key saved by the previous test would make this pass trivially
    // Saving the key makes the page introspect again, with the key, and the schema arrives (200 with __schema).
    const introspected = page.waitForResponse(
      async (res) =>
        res.url().startsWith(`${t.url}/graphql`) &&
        res.request().method() === 'POST' &&
        (res.request().postData() ?? '').includes('__schema') &&
        res.request().headers().authorization === `Bearer ${a.apiKey}`,
      { timeout: 60_000 },
    );
    let navigated = false;
    page.on('framenavigated', () => {
      navigated = true;
    });
    await page.locator('#sb-api-key').fill(a.apiKey);
    await page.locator('#sb-save-key').click();
    const res = await introspected;
    expect(res.status()).toBe(200);
    expect(((await res.json()) as any).data.__schema.queryType.name).toBe('Query');
    expect(navigated).toBe(false); // GraphiQL's own re-fetch, not a reload
    await page.close();
  });
});
