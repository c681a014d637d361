/**
 * A daemon restart ends every browser session (sessions live in memory): the open panel must say it is
 * logged out instead of reconnecting forever, and the login URL printed by the new daemon gets it back —
 * with one click, in this tab and in a new one (the panel key is shared by the origin's localStorage).
 * Logging out in one tab ends the session's sockets at once, so every other tab says so too (contract 5 v2).
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';

const dataDir = makeDataDir('ogf-browser-relogin-');
let d: RunningDaemon | undefined;
let browser: Browser | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('[c5.login] shows "Logged out" after a daemon restart, and the new login URL brings the panel back', async () => {
  const port = String(await freePort());
  d = await startDaemon({ dataDir, args: ['--port', port] });
  browser = await launchBrowser();
  const page = await browser.newPage();
  await loginPage(page, d);
  await d.stop();
  await page.locator('#connection:not([data-state="live"])').waitFor();
  d = await startDaemon({ dataDir, args: ['--port', port] });
  await page.locator('#connection[data-state="logged-out"]').waitFor({ timeout: 30_000 });
  expect(await page.locator('#logged-out').isVisible()).toBe(true);
  expect(await page.locator('#logged-out').innerText()).toMatch(/ogf-broker token owner/);
  await screenshot(page, 'owner-20-logged-out');
  await loginPage(page, d);
  expect(await page.locator('#logged-out').isHidden()).toBe(true);
});

it('[c5.owner-key] [c5.logout-closes] a new tab works without logging in; Log out in one tab logs every tab out', async () => {
  const context = await browser!.newContext();
  const page = await context.newPage();
  await loginPage(page, d!);
  const tab = await context.newPage();
  await tab.goto(`${d!.url}/`);
  await tab.locator('#connection[data-state="live"]').waitFor();
  await page.locator('#logout').click();
  await page.waitForURL(`${d!.url}/login`);
  await tab.locator('#connection[data-state="logged-out"]').waitFor();
  expect(await tab.locator('#logged-out').isVisible()).toBe(true);
  await screenshot(tab, 'owner-21-logged-out-elsewhere');
  await context.close();
});
