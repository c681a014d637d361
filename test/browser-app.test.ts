/**
 * The panel as an installable app, in real Chromium (contracts.md 13.2): the manifest is accepted
 * (installability checked through the DevTools protocol's `Page.getInstallabilityErrors`: none over the
 * daemon's own origin), the service worker registers and caches the panel's own files only — never a View,
 * `/`, or anything of `/owner/` — and the panel works at a phone's 390 px width: no sideways scrolling,
 * decision buttons inside the screen and big enough for a thumb, text readable. The screenshots go to
 * test-output/ and /tmp/shots-23/ to be looked at.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

const SHOTS = '/tmp/shots-23';
let d: RunningDaemon;
let browser: Browser;
let ai: Client;
let owner: OwnerSocket;

beforeAll(async () => {
  const dataDir = makeDataDir();
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(join(dataDir, 'marks'), { public_url: 'https://gate.example.com' }),
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await owner?.close();
  await d?.stop();
});

async function shot(page: import('playwright-core').Page, name: string): Promise<void> {
  const path = await screenshot(page, name);
  copyFileSync(path, join(SHOTS, `${name}.png`));
}

/**
 * A profile on disk: Chromium refuses to install from an incognito context (`in-incognito`), which is what
 * `browser.newContext()` makes.
 */
async function persistentContext(): Promise<{ context: BrowserContext; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  return { context, dir };
}

it('[c13.2.installable-app] the manifest is installable and the service worker caches the panel’s own files only', async () => {
  const { context, dir } = await persistentContext();
  const page = context.pages()[0] ?? (await context.newPage());
  const done = await queue(ai, 'mark', { word: 'cached' }, 'a justification that must never be cached');
  await loginPage(page, d);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  // Controlled after a reload: the panel's files now come through the worker.
  await page.reload();
  await page.locator('#connection[data-state="live"]').waitFor();
  expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(`${d.url}/sw.js`);
  const cdp = await context.newCDPSession(page);
  const manifest = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[] };
  expect(manifest.url).toBe(`${d.url}/manifest.webmanifest`);
  expect(manifest.errors).toEqual([]);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as {
    installabilityErrors: unknown[];
  };
  expect(installabilityErrors).toEqual([]);
  // Owner traffic while the worker runs: a decision and its upserts over /owner/ws.
  await card(page, done).locator('button.approve:not([disabled])').click();
  await owner.view(done, (v) => v.state === 'succeeded', 'succeeded');
  await card(page, done).locator('[data-status="SUCCEEDED"], .state-badge').first().waitFor();
  const cached = await page.evaluate(async () => {
    const out: Array<{ url: string; body: string }> = [];
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const req of await cache.keys()) {
        const res = await cache.match(req);
        out.push({ url: req.url, body: res === undefined ? '' : await res.text() });
      }
    }
    return out;
  });
  expect(cached.length).toBeGreaterThan(0);
  for (const { url, body } of cached) {
    expect(new URL(url).pathname).toMatch(/^\/(ui\/[a-z0-9-]+\.(js|css|svg|png)|manifest\.webmanifest)$/);
    expect(body).not.toContain(done);
    expect(body).not.toContain('must never be cached');
  }
  expect(cached.map((c) => new URL(c.url).pathname)).toEqual(expect.arrayContaining(['/ui/app.js']));
  await context.close();
  rmSync(dir, { recursive: true, force: true });
});

it('[c13.2.installable-app] the manifest and the worker are served through public_url too', async () => {
  for (const path of ['/manifest.webmanifest', '/sw.js', '/ui/icon-192.png', '/ui/icon-512.png']) {
    const r = await fetch(`${d.url}${path}`, { headers: { Host: 'gate.example.com' } });
    expect(r.status, path).toBe(200);
  }
  const m = (await (await fetch(`${d.url}/manifest.webmanifest`)).json()) as Record<string, unknown>;
  expect(m).toMatchObject({ display: 'standalone', start_url: '/', name: 'ogf-broker owner panel' });
  expect(m.icons).toEqual([
    expect.objectContaining({ sizes: '192x192', type: 'image/png' }),
    expect.objectContaining({ sizes: '512x512', type: 'image/png' }),
  ]);
  const png = Buffer.from(await (await fetch(`${d.url}/ui/icon-512.png`)).arrayBuffer());
  expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  expect(png.readUInt32BE(16)).toBe(512);
});

it('[c13.2.installable-app] at 390 px: nothing scrolls sideways, buttons are inside the screen and thumb-sized, text readable', async () => {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  });
  const page = await context.newPage();
  const id = await queue(
    ai,
    'mark',
    { word: 'phonewidthcheck' },
    'Checking the phone layout with a justification long enough to wrap over several lines on a narrow screen.',
  );
  await loginPage(page, d);
  const c = card(page, id);
  await c.locator('button.approve:not([disabled])').waitFor();
  await shot(page, 'panel-390');
  const layout = await page.evaluate((id) => {
    const node = document.querySelector<HTMLElement>(`article[data-pending-id="${id}"]`)!;
    const box = (s: string) =>
      node.querySelector<HTMLElement>(s)!.getBoundingClientRect().toJSON() as DOMRect;
    return {
      scrollWidth: document.documentElement.scrollWidth,
      approve: box('button.approve'),
      deny: box('button.deny'),
      summary: Number.parseFloat(getComputedStyle(node.querySelector('.summary')!).fontSize),
      arg: Number.parseFloat(getComputedStyle(node.querySelector('code.arg')!).fontSize),
    };
  }, id);
  expect(layout.scrollWidth).toBeLessThanOrEqual(390);
  for (const b of [layout.approve, layout.deny]) {
    expect(b.left).toBeGreaterThanOrEqual(0);
    expect(b.right).toBeLessThanOrEqual(390);
    expect(b.height).toBeGreaterThanOrEqual(44);
    expect(b.width).toBeGreaterThanOrEqual(44);
  }
  expect(layout.summary).toBeGreaterThanOrEqual(14);
  expect(layout.arg).toBeGreaterThanOrEqual(13);
  await context.close();
});
