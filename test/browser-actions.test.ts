/**
 * Approve from a Web Push notification, in real Chromium (contracts.md 19 (v4)). Headless Chromium has no
 * push service it can subscribe with (browser-push.test.ts), so the device's subscription is the test's
 * (test/helpers/push-service.ts: its P-256 keys and auth secret), told to the daemon over the owner socket;
 * the daemon pushes with real RFC 8291 encryption and VAPID to the push service the test plays on loopback,
 * which decrypts what arrived and — as a push service does — hands that payload to the browser's service
 * worker (DevTools protocol `ServiceWorker.deliverPushMessage`). The worker shows the notification with its
 * Approve and Deny buttons. The DevTools protocol has no way to click a notification's button, so the test
 * dispatches the `notificationclick` event a click would fire (with `action: "approve"`) inside the service
 * worker itself; from there on everything is the worker's own code: it POSTs the one-time URL on its origin
 * and shows the result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type BrowserContext, chromium, type Worker } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loginPage } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { Device, PushService } from './helpers/push-service.js';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let svc: PushService;
let context: BrowserContext;
let profile: string;
let markFile: string;
const phone = new Device();

beforeAll(async () => {
  svc = await PushService.start();
  const dataDir = makeDataDir();
  markFile = join(dataDir, 'marks');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile, { push: { actions: true } }) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  phone.endpoint = `${svc.origin}/push/phone-actions`;
  expect(await owner.request({ type: 'push_subscribe', subscription: phone.json() })).toMatchObject({
    ok: true,
  });
  profile = mkdtempSync(join(tmpdir(), 'ogf-chromium-actions-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  await context.grantPermissions(['notifications'], { origin: d.url });
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await ai?.close();
  await owner?.close();
  await d?.stop();
  await svc?.close();
});

interface Shown {
  title: string;
  body: string;
  tag: string;
  actions: Array<{ action: string; title: string }>;
  data: Record<string, unknown>;
}

it('[c19.actions] a Web Push notification’s Approve, clicked, is POSTed by the service worker and decides as its owner', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  await loginPage(page, d);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  const worker: Worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
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

  // The AI asks; the daemon pushes to the phone's subscription, encrypted for it.
  const id = await queue(ai, 'mark', { word: 'pushed' });
  const got = await waitFor(() => svc.pushed.find((p) => p.path === '/push/phone-actions'), 'the push');
  const payload = phone.decrypt(got.body);
  const parsed = JSON.parse(payload) as { tag: string; actions: { approve: string; deny: string } };
  expect(parsed.tag).toBe(id);
  expect(parsed.actions.approve).toMatch(/^\/act\/[A-Za-z0-9_-]{43}$/);
  expect(parsed.actions.deny).toMatch(/^\/act\/[A-Za-z0-9_-]{43}$/);

  // The push service delivers that payload to the browser's worker, which shows it with two buttons.
  const notifications = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      return (await reg.getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        tag: n.tag,
        actions: ((n as unknown as { actions?: Array<{ action: string; title: string }> }).actions ?? []).map(
          (a) => ({ action: a.action, title: a.title }),
        ),
        data: n.data as Record<string, unknown>,
      }));
    });
  let shown: Shown[] = [];
  // A push delivered while the worker is still starting can be lost, as with a real push service.
  for (let i = 0; i < 5 && shown.length === 0; i++) {
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: d.url, registrationId, data: payload });
    shown = await waitFor(
      () => notifications().then((l) => (l.length > 0 ? l : undefined)),
      'the notification',
      3000,
    ).catch(() => []);
  }
  expect(shown).toHaveLength(1);
  expect(shown[0]!.tag).toBe(id);
  expect(shown[0]!.actions).toEqual([
    { action: 'approve', title: 'Approve' },
    { action: 'deny', title: 'Deny' },
  ]);

  // The owner clicks Approve: the event a click fires, dispatched in the worker (see the file's comment).
  await worker.evaluate(async (tag) => {
    // Inside the service worker: its registration, and the NotificationEvent constructor of its scope.
    const scope = self as unknown as {
      registration: { getNotifications(o: { tag: string }): Promise<Notification[]> };
      NotificationEvent: new (type: string, init: { notification: Notification; action: string }) => Event;
      dispatchEvent(e: Event): boolean;
    };
    const n = (await scope.registration.getNotifications({ tag }))[0]!;
    scope.dispatchEvent(
      new scope.NotificationEvent('notificationclick', { notification: n, action: 'approve' }),
    );
  }, id);

  await waitFor(() => readMarks(markFile).includes('pushed') || undefined, 'the approved command ran');
  const decision = auditRows(d).find((a) => a.command_id === id && a.action === 'approve');
  expect(decision?.actor).toBe('owner');
  expect(JSON.parse(String(decision?.detail))).toMatchObject({ via: 'push' });
  // The worker shows what happened in the request's place.
  const result = await waitFor(
    () => notifications().then((l) => l.find((n) => n.title.startsWith('Approved: '))),
    'the result notification',
  );
  expect(result).toMatchObject({ title: `Approved: ${shown[0]!.title}`, tag: id, data: { result: 200 } });
  await page.screenshot({ path: '/tmp/actions-push.png' });

  // The same action again (a second device tapping late): spent, 410, nothing more decided.
  const again = await page.evaluate(
    (path) => fetch(path, { method: 'POST' }).then((r) => r.status),
    parsed.actions.approve,
  );
  expect(again).toBe(410);
  expect(auditRows(d).filter((a) => a.command_id === id && a.action === 'approve')).toHaveLength(1);
});
