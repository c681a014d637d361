/**
 * Deep links in real Chromium (contracts.md 13.1, 13.2): `<base>/#<pending_id>` — what every notification
 * links to — opens the panel scrolled to that card and focused: after the login page (pasting the token, or
 * opening the printed `/login#token=…` URL in the same tab), for a finished card, and for an arrival the
 * panel was holding behind "N new requests".
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, printedLoginUrl } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

let d: RunningDaemon;
let browser: Browser;
let ai: Client;
let owner: OwnerSocket;
const waiting: string[] = [];
let finished: string;
let unknown: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks')) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  finished = await queue(ai, 'mark', { word: 'done' });
  const v = await owner.view(finished, (x) => x.state === 'awaiting_review', 'waiting');
  await owner.request({ type: 'approve', id: finished, version: v.version });
  await owner.view(finished, (x) => x.state === 'succeeded', 'succeeded');
  // A reconcilable card (UNKNOWN: it outlived its deadline): the owner on it holds arrivals back.
  unknown = await queue(ai, 'stubborn', {});
  const s = await owner.view(unknown, (x) => x.state === 'awaiting_review', 'waiting');
  await owner.request({ type: 'approve', id: unknown, version: s.version });
  await owner.view(unknown, (x) => x.state === 'unknown', 'unknown');
  // Enough cards that the linked one starts out of view on a small window.
  for (let i = 0; i < 8; i++) waiting.push(await queue(ai, 'mark', { word: `w${i}` }, 'x '.repeat(200)));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await owner?.close();
  await d?.stop();
});

/** Whether the card is the focused element and inside the viewport. */
async function focusedInView(page: Page, id: string): Promise<boolean> {
  return page.evaluate((id) => {
    const node = document.querySelector<HTMLElement>(`article[data-pending-id="${id}"]`);
    if (node === null || document.activeElement !== node) return false;
    const r = node.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight;
  }, id);
}

it('[c13.1.deep-link] opens a finished card after the login page (token pasted), scrolled to and focused', async () => {
  const page = await browser.newPage({ viewport: { width: 800, height: 500 } });
  await page.goto(`${d.url}/#${finished}`);
  await page.locator('#login-form').waitFor();
  await page.locator('#token').fill(d.ownerToken);
  await page.locator('#login-form button').click();
  await page.waitForURL(`${d.url}/#${finished}`);
  await page.locator('#connection[data-state="live"]').waitFor();
  await page.waitForFunction(
    (id) => document.activeElement?.getAttribute('data-pending-id') === id,
    finished,
  );
  expect(await focusedInView(page, finished)).toBe(true);
  expect(await card(page, finished).getAttribute('data-status')).toBe('SUCCEEDED');
  await page.close();
});

it('[c13.1.deep-link] survives the printed login URL opened in the same tab', async () => {
  const target = waiting.at(-1)!;
  const context = await browser.newContext({ viewport: { width: 800, height: 500 } });
  const page = await context.newPage();
  await page.goto(`${d.url}/#${target}`);
  await page.locator('#login-form').waitFor();
  await page.goto(await printedLoginUrl(d));
  await page.waitForURL(`${d.url}/#${target}`);
  await page.waitForFunction((id) => document.activeElement?.getAttribute('data-pending-id') === id, target);
  expect(await focusedInView(page, target)).toBe(true);
  await context.close();
});

it('[c13.1.deep-link] places a held arrival when its link is opened in the open panel', async () => {
  const page = await browser.newPage({ viewport: { width: 800, height: 500 } });
  await loginPage(page, d);
  // The owner is on a card with live Reconcile buttons: arrivals are held behind the "new requests" button.
  await card(page, unknown).focus();
  const arrival = await queue(ai, 'mark', { word: 'late' });
  await page.locator('#arrivals:not([hidden])').waitFor();
  expect(await card(page, arrival).count()).toBe(0);
  await page.evaluate((id) => {
    location.hash = id;
  }, arrival);
  await page.waitForFunction((id) => document.activeElement?.getAttribute('data-pending-id') === id, arrival);
  expect(await focusedInView(page, arrival)).toBe(true);
  // An unknown id says so instead of doing nothing.
  await page.evaluate(() => {
    location.hash = 'c_unknown123';
  });
  await page.locator('#toast', { hasText: 'c_unknown123' }).waitFor();
  await page.close();
});
