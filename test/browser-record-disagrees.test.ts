/**
 * Contract 14 (v4) in the panel, real Chromium against the real daemon: issue 35 finding 6's attack — a
 * rule-denied `deploy prod` rewritten in broker.db (daemon stopped, raw SQL as the owner's user) to read
 * "staging, denied by owner" — then the daemon started again on that record. Opening the card's "Who did
 * what, when" marks it "the record disagrees", in words and with a sign; an untouched card is not marked.
 * Screenshots at 1280 and 390 px wide go to test-output/.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, OUTPUT_DIR, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { deployConfig } from './helpers/history.js';
import { callTool, mcpClient, OwnerSocket } from './helpers/owner.js';

let d: RunningDaemon;
let browser: Browser;
const ids: Record<string, string> = {};

/** The attack: the rule's denial rewritten in the commands table as the owner's own, of `staging`. */
function rewriteProd(dataDir: string, id: string): void {
  const db = new Database(join(dataDir, 'broker.db'));
  try {
    const { body } = db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string };
    const c = JSON.parse(body) as Record<string, unknown> & { phase: Record<string, unknown> };
    c.args = { env: 'staging' };
    c.display = (c.display as string[]).map((s) => (s === 'prod' ? 'staging' : s));
    c.phase = {
      ...c.phase,
      reason: 'OwnerDenied',
      detail: 'The owner denied the command.',
      decided_by: 'owner',
    };
    delete c.phase.owner_note;
    db.prepare('UPDATE commands SET body = ? WHERE id = ?').run(JSON.stringify(c), id);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-disagrees-');
  d = await startDaemon({ dataDir, config: deployConfig() });
  const ai = await mcpClient(d);
  const owner = await OwnerSocket.open(d);
  try {
    const prod = await callTool(ai, 'run_command_wait', {
      command: 'deploy',
      args: { env: 'prod' },
      wait_seconds: 0,
    });
    expect(prod).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
    ids.prod = prod.pending_id as string;
    const staging = await callTool(ai, 'run_command_wait', {
      command: 'deploy',
      args: { env: 'staging' },
      wait_seconds: 0,
    });
    ids.staging = staging.pending_id as string;
    await owner.view(ids.staging, (v) => v.version === 1, 'staging waiting');
    await owner.request({ type: 'approve', id: ids.staging, version: 1 });
    await owner.view(ids.staging, (v) => v.status === 'SUCCEEDED', 'staging ran');
  } finally {
    await owner.close();
    await ai.close();
  }
  expect(await d.stop()).toBe(0);
  rewriteProd(dataDir, ids.prod!);
  d = await startDaemon({ dataDir });
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

/** Opens a card's trail and waits for its entries. */
async function openTrail(page: Page, id: string): Promise<void> {
  const c = card(page, id);
  await c.getByText('Who did what, when').click();
  await expect
    .poll(() => c.locator('.trail-list li[data-seq]').count(), { timeout: 10_000 })
    .toBeGreaterThan(0);
}

describe('[c14.history] the panel marks a card whose history disagrees with its entries', () => {
  for (const [width, height, name] of [
    [1280, 900, 'record-disagrees-1280'],
    [390, 844, 'record-disagrees-390'],
  ] as const) {
    it(`says so in words on the tampered card, not on the untouched one (${width} px)`, async () => {
      const context = await browser.newContext({
        viewport: { width, height },
        ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
      });
      const page = await context.newPage();
      await loginPage(page, d);
      await card(page, ids.prod!).waitFor();
      // The card shows what the rewritten row says: staging, denied by the owner.
      await expect.poll(() => card(page, ids.prod!).textContent()).toMatch(/staging/);

      await openTrail(page, ids.staging!);
      await openTrail(page, ids.prod!);
      const mark = card(page, ids.prod!).locator('.record-disagrees');
      await expect.poll(() => mark.count(), { timeout: 10_000 }).toBe(1);
      expect(await mark.isVisible()).toBe(true);
      expect(await mark.textContent()).toMatch(
        /^⚠ The record disagrees — the reason, who decided, the arguments, the command line: /,
      );
      expect(await mark.getAttribute('data-fields')).toBe('reason decided_by args display');
      expect(await card(page, ids.staging!).locator('.record-disagrees').count()).toBe(0);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, name);
      // The card alone, as the owner reads it (the page's sticky header cannot cover it here).
      await card(page, ids.prod!).screenshot({ path: join(OUTPUT_DIR, `${name}-card.png`) });
      await context.close();
    }, 60_000);
  }
});
