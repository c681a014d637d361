/**
 * Real Chromium for the browser suites: Debian's `/usr/bin/chromium` driven by playwright-core (never a
 * downloaded browser), a fresh profile per launch, screenshots under `test-output/`, and the owner login
 * URL read from what the daemon printed at start.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ROOT, type RunningDaemon, waitFor } from './daemon.js';

export const OUTPUT_DIR = join(ROOT, 'test-output');

/** Launches headless Chromium with a temporary profile (launch() makes and removes one). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
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
}

/** The login URL the daemon printed on stdout at start (`…/login#token=…`). */
export async function printedLoginUrl(d: RunningDaemon): Promise<string> {
  return waitFor(() => /(http:\/\/\S+\/login#token=\S+)/.exec(d.stdout())?.[1], 'the printed login URL');
}

/** Saves a full-page screenshot as `test-output/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const path = join(OUTPUT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Logs a page in from the printed URL and waits until the panel is live. */
export async function loginPage(page: Page, d: RunningDaemon): Promise<void> {
  await page.goto(await printedLoginUrl(d));
  await page.waitForURL(`${d.url}/`);
  await page.locator('#connection[data-state="live"]').waitFor();
}

/** The card of a command. */
export function card(page: Page, id: string) {
  return page.locator(`article[data-pending-id="${id}"]`);
}
