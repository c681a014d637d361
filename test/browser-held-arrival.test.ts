/**
 * The held-arrival rule, refined (issue 23 item 5; contract 5 (v2)): arrivals are held behind "N new
 * requests" only while the pointer or focus is on a card with live decision buttons (waiting, or
 * reconcilable). Seen in Chromium before: after the owner clicked Approve on the only card, the finished
 * card moved into the history under the resting pointer, and the next request stayed hidden behind the
 * button until it was clicked. A finished card moving is harmless, so it holds nothing back; a reconcilable
 * one still does.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

let d: RunningDaemon;
let browser: Browser;
let ai: Client;
let owner: OwnerSocket;

beforeAll(async () => {
  const dataDir = makeDataDir();
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks')) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await owner?.close();
  await d?.stop();
});

it('[c5.click-safety] after Approve on the only card, the next request appears although the pointer rests on the finished card', async () => {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await loginPage(page, d);
  const first = await queue(ai, 'mark', { word: 'first' });
  const approve = card(page, first).locator('button.approve:not([disabled])');
  await approve.waitFor();
  const box = (await approve.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.up();
  await owner.view(first, (v) => v.state === 'succeeded', 'succeeded');
  await page.locator(`#history article[data-pending-id="${first}"][data-status="SUCCEEDED"]`).waitFor();
  // The pointer rests on the finished card (where it went after the decision).
  await card(page, first).hover();
  const hovered = await page.evaluate(() =>
    document.querySelector('article.card:hover')?.getAttribute('data-pending-id'),
  );
  expect(hovered, 'the finished card is under the pointer (the case this test is about)').toBe(first);

  const next = await queue(ai, 'mark', { word: 'next' });
  await page.locator(`#queue article[data-pending-id="${next}"]`).waitFor({ timeout: 5000 });
  expect(await page.locator('#arrivals').isHidden()).toBe(true);
  await screenshot(page, 'owner-23-next-after-approve');
  await page.close();
});

it('[c5.click-safety] the pointer on a reconcilable card still holds arrivals back', async () => {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await loginPage(page, d);
  const stuck = await queue(ai, 'stubborn', {});
  const v = await owner.view(stuck, (x) => x.state === 'awaiting_review', 'waiting');
  await owner.request({ type: 'approve', id: stuck, version: v.version });
  await owner.view(stuck, (x) => x.state === 'unknown', 'unknown');
  const reconcile = page.locator(`#history article[data-pending-id="${stuck}"] button.reconcile-btn`);
  await reconcile.waitFor();
  await reconcile.hover();
  const arrival = await queue(ai, 'mark', { word: 'held' });
  await page.locator('#arrivals:not([hidden])').waitFor();
  expect(await card(page, arrival).count()).toBe(0);
  // Leaving the card places it.
  await page.mouse.move(1, 1);
  await page.locator(`#queue article[data-pending-id="${arrival}"]`).waitFor();
  await page.close();
});
