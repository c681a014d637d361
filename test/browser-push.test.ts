/**
 * Web Push in the panel, in real Chromium (contracts.md 13.2), as far as headless Chromium allows. Headless
 * Chromium has no push service to register with (Google's is out of reach here), so "Notify this device"
 * goes as far as the browser's Push API — permission, the daemon's VAPID key from /owner/push-key,
 * pushManager.subscribe — and the panel says what the browser answered. What stands in for the push
 * service: the DevTools protocol's ServiceWorker.deliverPushMessage hands the service worker a push as a
 * push service would, and the notification it shows is read back; and a device subscribed over the owner
 * socket (the test's loopback push service, test/notify-push.test.ts) is listed and removed in the panel.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loginPage } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, OwnerSocket, ownerCatalog } from './helpers/owner.js';
import { Device } from './helpers/push-service.js';

let d: RunningDaemon;
let context: BrowserContext;
let profile: string;
let owner: OwnerSocket;

beforeAll(async () => {
  const dataDir = makeDataDir();
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks')) });
  owner = await OwnerSocket.open(d, {
    Authorization: `Bearer ${d.ownerToken}`,
    'User-Agent': 'TestPhone/1.0',
  });
  profile = mkdtempSync(join(tmpdir(), 'ogf-chromium-push-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  await context.grantPermissions(['notifications'], { origin: d.url });
});

afterAll(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
  await owner?.close();
  await d?.stop();
});

it('[c13.2.web-push] the panel lists this owner’s devices, removes one, and tries the real Push API', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  await loginPage(page, d);
  const status = page.locator('#devices-status');
  await expect.poll(() => status.textContent()).toBe('No device gets notifications yet.');

  // Headless Chromium's Push API: permission granted, the key fetched, the subscription refused or made.
  await page.locator('#push-subscribe').click();
  await expect
    .poll(() => status.textContent(), { timeout: 20_000 })
    .toMatch(/^(This device gets notifications\.|This browser’s push service refused the subscription: .+)$/);

  // Another device of this owner, subscribed over the owner socket, is listed with a Remove button.
  const phone = new Device();
  phone.endpoint = 'http://127.0.0.1:9/push/phone';
  expect(await owner.request({ type: 'push_subscribe', subscription: phone.json() })).toMatchObject({
    ok: true,
  });
  await page.reload();
  await page.locator('#connection[data-state="live"]').waitFor();
  await expect
    .poll(() => status.textContent())
    .toMatch(/1 device gets notifications \(not this one\)\.|This device and 1 other get notifications\./);
  mkdirSync('/tmp/shots-23', { recursive: true });
  await page.locator('#devices').screenshot({ path: '/tmp/shots-23/devices.png' });
  const item = page.locator('#devices-list li', { hasText: 'TestPhone/1.0' });
  await item.getByRole('button', { name: 'Remove' }).click();
  await waitFor(async () => {
    const r = await owner.request({ type: 'push_list' });
    return !(r.devices as Frame[]).some((x) => x.endpoint === phone.endpoint);
  }, 'the phone removed from the store');
  await expect.poll(() => item.count()).toBe(0);
});

it('[c13.2.web-push] the service worker shows a pushed notification whose click target is the card', async () => {
  const page = context.pages()[0]!;
  const cdp = await context.newCDPSession(page);
  const registration = new Promise<string>((resolve) => {
    cdp.on(
      'ServiceWorker.workerRegistrationUpdated',
      (e: { registrations: Array<{ registrationId: string; scopeURL: string }> }) => {
        const r = e.registrations.find((x) => x.scopeURL === `${d.url}/`);
        if (r) resolve(r.registrationId);
      },
    );
  });
  await cdp.send('ServiceWorker.enable');
  const registrationId = await registration;
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  const notifications = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      const list = await reg.getNotifications();
      return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as unknown }));
    });
  // A push delivered while the worker is still starting can be lost, as with a real push service: the
  // service stands in by delivering again until the worker shows it (at most five times).
  let shown: Awaited<ReturnType<typeof notifications>> = [];
  for (let i = 0; i < 5 && shown.length === 0; i++) {
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin: d.url,
      registrationId,
      data: JSON.stringify({
        title: 'local asks: mark',
        body: 'Run mark',
        url: '/#c_pushed123',
        tag: 'c_pushed123',
      }),
    });
    shown = await waitFor(
      () => notifications().then((l) => (l.length > 0 ? l : undefined)),
      'the notification',
      3000,
    ).catch(() => []);
  }
  expect(shown).toEqual([
    { title: 'local asks: mark', body: 'Run mark', tag: 'c_pushed123', data: { url: '/#c_pushed123' } },
  ]);
});
