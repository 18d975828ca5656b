// The event stream from a web app on another origin, in a real browser (Debian's Chromium through playwright-core):
// a page served by its own origin opens an EventSource on GET /api/events of the service (allowed in CORS_ORIGINS)
// and receives an event posted afterwards. Chromium blocks the stream unless its response carries
// Access-Control-Allow-Origin, so this fails when the hijacked SSE response drops the CORS headers.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing`);
  console.warn(`SKIPPED: browser test needs Chromium at ${CHROMIUM} (apt-get install chromium); .ci/run installs it.`);
}

describe.skipIf(!available)('EventSource from another origin in Chromium', () => {
  let t: TestApp;
  let a: TestAccount;
  let site: Server;
  let siteOrigin: string;
  let browser: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    // The web app's origin: a page of its own on another port and host name than the API.
    site = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>web app</title><p>web app</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://localhost:${(site.address() as AddressInfo).port}`;
    t = await startApp({ env: { CORS_ORIGINS: siteOrigin } });
    a = await t.newAccount();
    profile = await mkdtemp(path.join(tmpdir(), 'switchboard-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => site?.close(resolve));
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('opens the stream with a stream token and receives an event posted afterwards', async () => {
    const token = await a.request('POST', '/api/events/tokens');
    expect(token.status).toBe(201);
    const page = await browser.newPage();
    await page.goto(`${siteOrigin}/`);
    const streamUrl = `${t.url}/api/events?unnamed=1&channels=sms&token=${encodeURIComponent(token.body.token)}`;
    expect(new URL(streamUrl).origin).not.toBe(siteOrigin);
    await page.evaluate((url) => {
      const w = window as unknown as { received: string[]; opened: boolean; errors: number };
      w.received = [];
      w.opened = false;
      w.errors = 0;
      const es = new EventSource(url);
      es.onopen = () => {
        w.opened = true;
      };
      es.onerror = () => {
        w.errors += 1;
      };
      es.onmessage = (m) => w.received.push(JSON.stringify({ id: m.lastEventId, envelope: JSON.parse(m.data) }));
    }, streamUrl);
    // Open means the browser accepted the cross-origin response (CORS headers present).
    await page.waitForFunction(() => (window as unknown as { opened: boolean }).opened, undefined, {
      timeout: 60_000,
    });
    const posted = await a.request('POST', '/api/events', {
      eventType: 'sms.sent',
      payload: { id: 'msg-cors', from: '+14155550100', to: '+14155550101', status: 'sent' },
    });
    expect(posted.status).toBe(202);
    const handle = await page.waitForFunction(
      (id) => (window as unknown as { received: string[] }).received.find((d) => JSON.parse(d).id === id),
      posted.body.id,
      { timeout: 60_000 },
    );
    const message = JSON.parse((await handle.jsonValue()) as string);
    expect(message).toMatchObject({ id: posted.body.id, envelope: { eventType: 'sms.sent', customerId: a.accountId } });
    await page.close();
  });
});
