/**
 * The owner panel in real Chromium against the real daemon (contracts.md 5, issue 4): log in from the
 * printed URL, see requests arrive live, approve by click, deny with a note by keyboard, a decision made
 * elsewhere explained, history filters, and the panel at phone width. Screenshots go to test-output/.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, printedLoginUrl, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, mcpClient, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let markFile: string;

function marks(): string[] {
  return readMarks(markFile);
}

/**
 * The owner's pointer rests off the cards, on the page header. Over a card that an arrival would move, new
 * requests wait behind the "new requests" button instead (contract 5 (v2)); browser-click-safety covers that.
 */
async function pointerAway(p: Page): Promise<void> {
  await p.mouse.move(1, 1);
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
  ai = await mcpClient(d);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('owner panel in Chromium', () => {
  it('[c5.login] [c1.2.tokens] logs in from the printed URL: the token leaves the address bar, the cookie is HttpOnly', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const url = await printedLoginUrl(d);
    expect(url).toContain('/login#token=');
    await loginPage(page, d);
    expect(page.url()).toBe(`${d.url}/`);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookies[0]?.value).not.toBe(d.ownerToken);
    expect(await page.content()).not.toContain(d.ownerToken);
    expect(errors).toEqual([]);
    await screenshot(page, 'owner-01-logged-in-empty');
  });

  it('[c5.owner-key] a new tab needs no login (the key is in localStorage); the cookie alone, in another browser, shows nothing', async () => {
    const id = await queue(ai, 'mark', { word: 'cookieonly' });
    const tab = await context.newPage();
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    await card(tab, id).waitFor();
    await tab.close();
    // Another browser profile holding just the cookie — what a server on another port receives.
    const thief = await browser.newContext();
    await thief.addCookies(await context.cookies());
    const stolen = await thief.newPage();
    await stolen.goto(`${d.url}/`);
    await stolen.locator('#connection[data-state="logged-out"]').waitFor();
    expect(await stolen.locator('article.card').count()).toBe(0);
    await screenshot(stolen, 'owner-01b-cookie-alone-logged-out');
    await thief.close();
    await card(page, id).getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    // The denied card is now in the history, under the pointer: new arrivals would be held (contract 5 v2).
    await pointerAway(page);
  });

  it('shows a new request without reload and approves it by click', async () => {
    const id = await queue(ai, 'mark', { word: 'clicked' }, 'Testing that a click approves.');
    const c = card(page, id);
    await c.waitFor();
    const text = await c.innerText();
    expect(text).toContain('mark');
    expect(text).toContain('clicked');
    expect(text).toContain('local');
    expect(text).toContain('Testing that a click approves.');
    expect(text).toMatch(/expires in \d+:\d\d/);
    expect(text).toContain('PENDING');
    expect(await page.title()).toMatch(/^\(1\)/);
    await screenshot(page, 'owner-02-request-waiting');
    await c.getByRole('button', { name: /^Approve/ }).click();
    await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    expect(await c.innerText()).toContain('SUCCEEDED');
    expect(marks()).toEqual(['clicked']);
    expect(await page.title()).not.toMatch(/^\(/);
    await screenshot(page, 'owner-03-approved');
  });

  it('denies with a note by keyboard only; the AI receives the note', async () => {
    await pointerAway(page);
    const id = await queue(ai, 'mark', { word: 'keyboard' }, 'Testing the keyboard.');
    const c = card(page, id);
    await c.waitFor();
    await c.focus();
    await page.keyboard.press('n');
    await page.keyboard.type('Please ask again tomorrow');
    // A card's decision buttons, and the shortcuts standing for them, are inert for its first second.
    await c.locator('button.deny:enabled').waitFor();
    await page.keyboard.press('Enter');
    await page.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    const text = await c.innerText();
    expect(text).toContain('DENIED · OwnerDenied');
    expect(text).toContain('Please ask again tomorrow');
    const result = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    expect(result).toMatchObject({
      status: 'DENIED',
      reason: 'OwnerDenied',
      owner_note: 'Please ask again tomorrow',
    });
    expect(marks()).not.toContain('keyboard');
    await screenshot(page, 'owner-04-denied-by-keyboard');
  });

  it('a decision in another tab shows at once; a conflicting click is explained, not swallowed', async () => {
    await pointerAway(page);
    const id = await queue(ai, 'mark', { word: 'twotabs' });
    const second = await context.newPage();
    // The second tab does not hear about this command's updates, so it acts on a stale card.
    await second.routeWebSocket(/\/owner\/ws$/, (ws) => {
      const server = ws.connectToServer();
      server.onMessage((m) => {
        const text = String(m);
        if (!(text.startsWith('{"type":"upsert"') && text.includes(id) && !text.includes('"version":1,')))
          ws.send(m);
      });
    });
    await loginPage(second, d);
    await card(second, id).waitFor();
    await card(page, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    await card(second, id).getByRole('button', { name: /^Deny/ }).click();
    const msg = card(second, id).locator('.card-msg');
    await msg.filter({ hasText: 'AlreadyDecided' }).waitFor();
    expect(await msg.innerText()).toMatch(/Already decided elsewhere/);
    await screenshot(second, 'owner-05-conflict-explained');
    // A third, ordinary tab opened now shows the decided card from its snapshot.
    const third = await context.newPage();
    await third.goto(`${d.url}/`);
    await third.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    await second.close();
    await third.close();
    expect(marks().filter((m) => m === 'twotabs')).toHaveLength(1);
  });

  it('filters history by status and client', async () => {
    await page.locator('#filter-status').selectOption('DENIED');
    const shown = page.locator('#history article.card:visible');
    await waitFor(async () => (await shown.count()) > 0, 'a denied card');
    for (const s of await shown.evaluateAll((els) => els.map((e) => e.getAttribute('data-status'))))
      expect(s).toBe('DENIED');
    await page.locator('#filter-status').selectOption('');
    await page.locator('#filter-client').selectOption('local');
    expect(await shown.count()).toBeGreaterThanOrEqual(3);
    await page.locator('#filter-client').selectOption('');
  });

  it('is usable at phone width', async () => {
    const id = await queue(ai, 'mark', { word: 'phone' }, 'Checking the layout on a narrow screen.');
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${d.url}/`);
    const c = card(phone, id);
    await c.waitFor();
    const approve = c.getByRole('button', { name: /^Approve/ });
    const box = await approve.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(phone, 'owner-06-phone');
    await approve.click();
    await phone.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    await phone.close();
  });

  it('shows the connection state and reconnects by itself after the socket drops', async () => {
    const tab = await context.newPage();
    const routes: WebSocketRoute[] = [];
    await tab.routeWebSocket(/\/owner\/ws$/, (ws) => {
      ws.connectToServer();
      routes.push(ws);
    });
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    // Drop the connection under the panel: it must say so and reconnect on its own.
    await routes[0]!.close({ code: 1001, reason: 'network went away' });
    await tab.locator('#connection[data-state="waiting"]').waitFor();
    expect(await tab.locator('#connection').innerText()).toMatch(/Disconnected: reconnecting/);
    await screenshot(tab, 'owner-07-disconnected');
    const id = await queue(ai, 'mark', { word: 'afterdrop' });
    await tab.locator('#connection[data-state="live"]').waitFor();
    await card(tab, id).waitFor();
    expect(routes.length).toBeGreaterThanOrEqual(2);
    await tab.close();
  });

  it('raises a desktop notification and a title badge when something new waits', async () => {
    await context.grantPermissions(['notifications'], { origin: d.url });
    const tab = await context.newPage();
    await tab.addInitScript(() => {
      // Record what the panel shows; the real Notification still runs underneath.
      const w = window as unknown as { __shown: Array<{ title: string; body?: string }> };
      w.__shown = [];
      const Real = window.Notification;
      class Recording extends Real {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          w.__shown.push({ title, body: options?.body });
        }
      }
      window.Notification = Recording;
    });
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    expect(await tab.locator('#enable-notifications').isHidden()).toBe(true);
    const id = await queue(ai, 'mark', { word: 'notify' });
    await card(tab, id).waitFor();
    const shown = await tab.waitForFunction(() => {
      const list = (window as unknown as { __shown: Array<{ title: string; body?: string }> }).__shown;
      return list.length > 0 ? list : undefined;
    });
    const notes = (await shown.jsonValue()) as Array<{ title: string; body?: string }>;
    expect(notes).toHaveLength(1);
    expect(notes[0]?.title).toBe('Approval needed');
    expect(notes[0]?.body).toContain('local');
    expect(notes[0]?.body).toContain('notify');
    const waiting = await tab.locator('#queue article.state-awaiting_review').count();
    expect(waiting).toBeGreaterThanOrEqual(1);
    expect(await tab.title()).toBe(`(${waiting}) ogf-broker owner`);
    await card(tab, id).focus();
    await card(tab, id).locator('button.approve:enabled').waitFor();
    await tab.keyboard.press('a');
    await tab.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    expect(await tab.title()).toBe(waiting === 1 ? 'ogf-broker owner' : `(${waiting - 1}) ogf-broker owner`);
    await tab.close();
  });
});
